// Company ids: UUIDs of version 7, so that they sort in the order companies were made.
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/lib/time-ordered-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedId', () => {
  it('is a UUID of version 7 and the RFC 9562 variant, its first 48 bits the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 29, 13, 40, 0, 123);
    const id = timeOrderedId(at);
    expect(id).toMatch(V7);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sorts as text in the order of the times it was made at, and never repeats', () => {
    const start = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 5_000 }, (_, i) => timeOrderedId(start + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    const firsts = ids.filter((_, i) => i % 10 === 0);
    expect([...firsts].sort()).toEqual(firsts);
    for (const id of ids) expect(id).toMatch(V7);
  });
});
