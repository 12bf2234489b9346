// The one polling loop every waiting command uses: it stops when done, at the deadline or
// on Ctrl-C (ending a pause at once), backs off, and leaves no listener on the signal.
import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pause, pollDelays, pollUntil } from '../../src/client/poll.js';

describe('pollUntil', () => {
  it('asks round after round until done, then stops', async () => {
    let rounds = 0;
    const signal = new AbortController().signal;
    await pollUntil({ signal, deadline: Date.now() + 10_000, firstDelayMs: 1, done: () => rounds >= 3, round: async () => void rounds++ });
    expect(rounds).toBe(3);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('starts no round after the deadline', async () => {
    let rounds = 0;
    await pollUntil({ signal: new AbortController().signal, deadline: Date.now() - 1, done: () => false, round: async () => void rounds++ });
    expect(rounds).toBe(0);
  });

  it('Ctrl-C ends a long pause at once, with no round after it', async () => {
    const controller = new AbortController();
    let rounds = 0;
    const started = Date.now();
    const polling = pollUntil({ signal: controller.signal, deadline: Date.now() + 60_000, firstDelayMs: 30_000, done: () => false, round: async () => void rounds++ });
    controller.abort();
    await polling;
    expect(rounds).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('spaces its rounds by what `spacing` asks after each, never closer than the schedule', async () => {
    const at: number[] = [];
    let items = 3;
    await pollUntil({
      signal: new AbortController().signal, deadline: Date.now() + 10_000, firstDelayMs: 1, done: () => items === 0,
      // 100 ms an unfinished item: 300, 200, then 100 ms from one round to the next.
      spacing: () => items * 100,
      round: async () => {
        at.push(Date.now());
        items -= 1;
      },
    });
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(195);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(95);
  });

  it('many waits at once leave no listener behind', async () => {
    const signal = new AbortController().signal;
    // As runCli does for a command's signal: 50 waits at once are not a leak.
    setMaxListeners(100, signal);
    await Promise.all(Array.from({ length: 50 }, () => pause(2, signal)));
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('pollDelays', () => {
  it('grows by half from the first delay, up to 5 s', () => {
    const delays = pollDelays(500);
    expect(Array.from({ length: 8 }, () => delays.next().value)).toEqual([500, 750, 1125, 1688, 2532, 3798, 5000, 5000]);
  });
});
