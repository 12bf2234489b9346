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

/** A v4-shaped UUID drawn from the stream, so ids are stable per (seed, type, index). */
export function uuidFrom(rng: Rng): string {
  const hex = (n: number) => Math.floor(n).toString(16).padStart(8, '0');
  const h = hex(rng() * 4294967296) + hex(rng() * 4294967296) + hex(rng() * 4294967296) + hex(rng() * 4294967296);
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
