// The process's open-file limit as /proc/self/limits shows it, and the cap on open event
// streams the service derives from it (half, or 1,000 when it is unknown).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openFileLimit } from '../../src/lib/open-files.js';
import { defaultStreamLimits } from '../../src/service/events/open-streams.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                524288               files
Max locked memory         8388608              8388608              bytes
`;

describe('openFileLimit', () => {
  it('reads the soft limit', () => {
    expect(openFileLimit(() => LIMITS)).toBe(20000);
  });

  it('is unknown when unlimited, missing or unreadable', () => {
    expect(openFileLimit(() => LIMITS.replace('20000       ', 'unlimited   '))).toBeUndefined();
    expect(openFileLimit(() => 'Limit  Soft Limit\n')).toBeUndefined();
    expect(openFileLimit(() => {
      throw new Error('ENOENT');
    })).toBeUndefined();
  });

  it.runIf(existsSync('/proc/self/limits'))('reads this process\'s on Linux', () => {
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});

describe('defaultStreamLimits', () => {
  it('10 per key, 50 per account, half the open-file limit in all, or 1,000 when it is unknown', () => {
    expect(defaultStreamLimits(20000)).toEqual({ perKey: 10, perAccount: 50, total: 10000 });
    expect(defaultStreamLimits(undefined)).toEqual({ perKey: 10, perAccount: 50, total: 1000 });
    expect(defaultStreamLimits(1).total).toBe(1);
  });
});
