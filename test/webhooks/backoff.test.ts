// The retry schedule: exponential with full jitter, capped, Retry-After honoured up to the
// cap, and the last try on the give-up time.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, nextStep, parseRetryAfter, retryDelayMs } from '../../src/service/webhooks/backoff.js';

describe('backoff', () => {
  it('doubles the longest wait from 5 s up to an hour, and jitters below it', () => {
    const longest = [1, 2, 3, 4, 10, 11, 50].map((n) => retryDelayMs(DEFAULT_BACKOFF, n, () => 1));
    expect(longest).toEqual([5_000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000]);
    expect(retryDelayMs(DEFAULT_BACKOFF, 4, () => 0.5)).toBe(20_000);
    // Never under a second: retries are kept to the second.
    expect(retryDelayMs(DEFAULT_BACKOFF, 1, () => 0)).toBe(1_000);
  });

  it('honours Retry-After, up to the cap', () => {
    expect(retryDelayMs(DEFAULT_BACKOFF, 1, () => 0, 90_000)).toBe(90_000);
    expect(retryDelayMs(DEFAULT_BACKOFF, 1, () => 1, 1_000)).toBe(5_000);
    expect(retryDelayMs(DEFAULT_BACKOFF, 1, () => 0, 10 * 3_600_000)).toBe(3_600_000);
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('gives up a day after the first failure, with the last try on that time', () => {
    const first = new Date('2026-01-01T00:00:00Z');
    const late = new Date(first.getTime() + 23.9 * 3_600_000);
    const step = nextStep(DEFAULT_BACKOFF, { failures: 30, firstFailure: first, now: late, random: () => 1 });
    expect(step).toEqual({ giveUp: false, at: new Date(first.getTime() + 24 * 3_600_000) });
    expect(nextStep(DEFAULT_BACKOFF, { failures: 31, firstFailure: first, now: new Date(first.getTime() + 24 * 3_600_000), random: () => 1 })).toEqual({ giveUp: true });
    // Whole seconds, rounded up.
    const soon = nextStep(DEFAULT_BACKOFF, { failures: 1, firstFailure: first, now: new Date(first.getTime() + 250), random: () => 0.3 });
    expect(soon).toEqual({ giveUp: false, at: new Date(first.getTime() + 2_000) });
  });
});
