// Seeded randomness for generated records. Record i of a data type draws from its own
// stream, seeded by hashing (tenant seed, data type, i), so any record is computed on
// its own in O(1): paging a million invoices never materialises the ones before.

export type Rng = () => number;

/** FNV-1a: a stable 32-bit number for a stream name. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Folds integers into one well-mixed 32-bit seed (murmur3's finaliser per part). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** mulberry32: tiny, fast, and good enough for plausible fake data. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The stream of record `index` of `stream` (a data type key) for a tenant seed. */
export function recordRng(seed: number, stream: string, index: number): Rng {
  // index can pass 2^32 in theory; split it so huge indexes never alias small ones.
  return mulberry32(mixSeed(seed, hashString(stream), index, Math.floor(index / 4294967296)));
}

/** An integer in [min, max]. */
export function int(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

/** true with probability p. */
export function chance(rng: Rng, p: number): boolean {
  return rng() < p;
}

const BYTE_HEX = Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0'));
const NIBBLE = '0123456789abcdef';

/** A draw as a 32-bit unsigned integer. */
const draw = (rng: Rng): number => Math.floor(rng() * 4294967296);
const hex32 = (n: number): string => `${BYTE_HEX[n >>> 24]}${BYTE_HEX[(n >>> 16) & 255]}${BYTE_HEX[(n >>> 8) & 255]}${BYTE_HEX[n & 255]}`;

/**
 * A v4-shaped UUID drawn from the stream, so ids are stable per (seed, type, index): four
 * draws as 32 hex digits, the 13th made "4" and the 17th the variant (8, 9, a or b), put
 * together a byte at a time from tables (formatting each number was most of a page's cost).
 */
export function uuidFrom(rng: Rng): string {
  const a = draw(rng);
  const b = draw(rng);
  const c = draw(rng);
  const d = draw(rng);
  return `${hex32(a)}-${BYTE_HEX[b >>> 24]}${BYTE_HEX[(b >>> 16) & 255]}-4${NIBBLE[(b >>> 8) & 15]}${BYTE_HEX[b & 255]}-`
    + `${NIBBLE[((c >>> 28) & 3) | 8]}${NIBBLE[(c >>> 24) & 15]}${BYTE_HEX[(c >>> 16) & 255]}-${BYTE_HEX[(c >>> 8) & 255]}${BYTE_HEX[c & 255]}${hex32(d)}`;
}
