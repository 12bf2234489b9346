// Waiting on work the service does by itself (syncs, async pushes): one loop for every
// command that waits, with backoff and jitter, a deadline, and Ctrl-C ending a pause at once.
// Given a feed of the service's events (wait-for-change.ts), a pause also ends at the first
// relevant event, and the polling goes on beside it as the safety net.
import type { ChangeEvent, ChangeFeed } from './change-feed.js';

/** Poll delays: `firstMs`, then ×1.5 each round, at most `maxMs`. */
export function* pollDelays(firstMs = 500, maxMs = 5000): Generator<number> {
  let delay = firstMs;
  for (;;) {
    yield delay;
    delay = Math.min(maxMs, Math.round(delay * 1.5));
  }
}

/** Resolves after `ms`, or at once when the signal aborts (never rejects; leaves no listener behind). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface PollOptions {
  signal: AbortSignal;
  /** Epoch milliseconds after which no further round starts. */
  deadline: number;
  /** The first pause (default 500 ms); later ones grow by half, to 5 s. */
  firstDelayMs?: number;
  /** True once there is nothing left to wait for. */
  done(): boolean;
  /**
   * One round of asking (after each pause). `changed`: the events that ended the pause, so
   * the round may look only at what they name; without it, the round looks at everything.
   */
  round(changed?: ChangeEvent[]): Promise<void>;
  /** Wake on the service's events as well as on the poll schedule. */
  wake?: Wake;
  /**
   * The least time (ms) from one full round to the next, asked after each: a wait over
   * thousands of items spaces its full rounds, which read every one, so as not to load the
   * service with reads of things that have not changed.
   */
  spacing?: () => number;
}

export interface Wake {
  feed: ChangeFeed;
  /** Whether an event concerns what is being waited for (asked when it arrives). */
  relevant(event: ChangeEvent): boolean;
  /** The feed's mark from before the work being waited on began (default: now). */
  since?: number;
}

/**
 * Pauses and asks, round after round, until done(), the deadline or the signal. Pauses
 * vary by ±10% so that many waiting clients do not ask in step. The caller reads why it
 * stopped from its own state (done, signal.aborted, or else the deadline).
 */
export async function pollUntil(options: PollOptions): Promise<void> {
  const { signal, deadline, wake } = options;
  if (wake) return pollOrWake(options, wake);
  for (const delay of pollDelays(options.firstDelayMs)) {
    if (options.done() || signal.aborted || Date.now() >= deadline) return;
    const jittered = Math.max(Math.round(delay * (0.9 + Math.random() * 0.2)), options.spacing?.() ?? 0);
    await pause(Math.min(jittered, deadline - Date.now()), signal);
    if (signal.aborted) return;
    await options.round();
  }
}

const jitter = (delay: number) => Math.round(delay * (0.9 + Math.random() * 0.2));

/**
 * The same schedule of full rounds, with a round as soon as a relevant event arrives in
 * between (one that looks at what the events name). Events that arrive during a round end
 * the next pause at once, so a burst costs a few rounds, not one per event; a full round
 * still comes on schedule however busy the stream is, so nothing depends on every event
 * arriving.
 */
async function pollOrWake(options: PollOptions, wake: Wake): Promise<void> {
  const { signal, deadline } = options;
  const delays = pollDelays(options.firstDelayMs);
  let since = wake.since ?? wake.feed.mark();
  const next = () => Date.now() + Math.max(jitter(delays.next().value), options.spacing?.() ?? 0);
  let fullAt = next();
  for (;;) {
    if (options.done() || signal.aborted || Date.now() >= deadline) return;
    const woke = await wake.feed.next(since, wake.relevant, Math.min(fullAt, deadline) - Date.now(), signal);
    since = woke.mark;
    if (signal.aborted) return;
    if (woke.events === undefined || woke.events.length === 0 || Date.now() >= fullAt) {
      fullAt = next();
      await options.round();
    } else await options.round(woke.events);
  }
}
