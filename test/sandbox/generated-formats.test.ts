// Generated ids and dates are a tenant's identity: the same (seed, type, index) must give
// the same record after any change to how they are written out. Each is held here to
// its plain definition (the UUID's hex digits from Number#toString, the date from Date).
import { describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/lib/clock.js';
import { isoDay } from '../../src/sandbox/generate/catalog.js';
import { mulberry32, uuidFrom, type Rng } from '../../src/sandbox/generate/prng.js';

function plainUuid(rng: Rng): string {
  const hex = (n: number) => Math.floor(n).toString(16).padStart(8, '0');
  const h = hex(rng() * 4294967296) + hex(rng() * 4294967296) + hex(rng() * 4294967296) + hex(rng() * 4294967296);
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

describe('generated formats', () => {
  it('draws the UUIDs its plain definition does', () => {
    for (let seed = 0; seed < 20_000; seed++) {
      expect(uuidFrom(mulberry32(seed * 2654435761))).toBe(plainUuid(mulberry32(seed * 2654435761)));
    }
    expect(uuidFrom(mulberry32(42))).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('writes each day and second of day as Date does', () => {
    const base = Date.UTC(2023, 0, 1);
    for (let day = -2_100; day < 1_200; day += 7) {
      for (const second of [0, 1, 59, 60, 3_599, 3_600, 43_210, 86_399]) {
        expect(isoDay(day, second)).toBe(isoSeconds(new Date(base + day * 86_400_000 + second * 1000)));
      }
    }
    expect(isoDay(0)).toBe('2023-01-01T00:00:00Z');
  });
});
