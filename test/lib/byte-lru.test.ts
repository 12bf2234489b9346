// The byte-bounded cache under the response cache and the PDF cache.
import { describe, expect, it } from 'vitest';
import { ByteLru } from '../../src/lib/byte-lru.js';

const lru = (maxBytes: number, maxBytesPerClient: number) => new ByteLru<string>({ maxBytes, maxBytesPerClient }, (value) => value.length);

describe('ByteLru', () => {
  it('evicts the least recently used first, the adding client\'s own before anyone else\'s', () => {
    const cache = lru(100, 40);
    cache.set('B', 'b1', 'b'.repeat(10));
    for (const key of ['a1', 'a2', 'a3', 'a4']) cache.set('A', key, 'a'.repeat(10));
    expect(cache.get('a1')).toBe('a'.repeat(10)); // now the most recently used of A's
    cache.set('A', 'a5', 'a'.repeat(10));
    expect(cache.get('a2')).toBeUndefined();
    expect(['a1', 'a3', 'a4', 'a5', 'b1'].map((key) => cache.get(key) !== undefined)).toEqual([true, true, true, true, true]);
    expect([cache.size('A'), cache.size('B'), cache.size()]).toEqual([40, 10, 50]);
  });

  it('keeps the overall bound by evicting the least recently used of anyone', () => {
    const cache = lru(30, 20);
    cache.set('A', 'a1', 'x'.repeat(5));
    cache.set('B', 'b1', 'x'.repeat(5));
    cache.set('C', 'c1', 'x'.repeat(5));
    cache.set('C', 'c2', 'x'.repeat(5));
    cache.set('D', 'd1', 'x'.repeat(5));
    cache.set('D', 'd2', 'x'.repeat(5));
    cache.set('D', 'd3', 'x'.repeat(5));
    expect(cache.get('a1')).toBeUndefined();
    expect(cache.size()).toBe(30);
    expect(cache.size('A')).toBe(0);
  });

  it('replaces what a key held, and keeps no value over a quarter of a client\'s bound', () => {
    const cache = lru(100, 40);
    cache.set('A', 'k', 'x'.repeat(8));
    cache.set('A', 'k', 'y'.repeat(6));
    expect([cache.get('k'), cache.size('A'), cache.size()]).toEqual(['y'.repeat(6), 6, 6]);
    cache.set('A', 'k', 'z'.repeat(11));
    expect([cache.get('k'), cache.size('A'), cache.size()]).toEqual([undefined, 0, 0]);
    cache.set('A', 'k', 'z'.repeat(10));
    cache.clear();
    expect([cache.get('k'), cache.size()]).toEqual([undefined, 0]);
  });
});
