// Waiting on work the service does by itself (syncs, async pushes): one loop for every
// command that waits, with backoff and jitter, a deadline, and Ctrl-C ending a pause at once.

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
  /** One round of asking (after each pause). */
  round(): Promise<void>;
}

/**
 * Pauses and asks, round after round, until done(), the deadline or the signal. Pauses
 * vary by ±10% so that many waiting clients do not ask in step. The caller reads why it
 * stopped from its own state (done, signal.aborted, or else the deadline).
 */
export async function pollUntil(options: PollOptions): Promise<void> {
  const { signal, deadline } = options;
  for (const delay of pollDelays(options.firstDelayMs)) {
    if (options.done() || signal.aborted || Date.now() >= deadline) return;
    const jittered = Math.round(delay * (0.9 + Math.random() * 0.2));
    await pause(Math.min(jittered, deadline - Date.now()), signal);
    if (signal.aborted) return;
    await options.round();
  }
}
