// When to try a failed delivery again: exponential backoff with full jitter (a random wait
// up to base × factor^(n-1), capped), so receivers coming back up are not hit by every
// retry at once; a Retry-After the receiver sent is honoured up to the cap. A delivery
// still failing `giveUpMs` after its first failure is given up.

export interface BackoffPolicy {
  baseMs: number;
  factor: number;
  capMs: number;
  giveUpMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, factor: 2, capMs: 60 * 60_000, giveUpMs: 24 * 60 * 60_000 };

/** Retries are stored to the second; a shorter wait would only spin. */
const MIN_WAIT_MS = 1_000;

/** The wait before the next try, after `failures` failed attempts in a row (1 after the first). */
export function retryDelayMs(policy: BackoffPolicy, failures: number, random: () => number, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * policy.factor ** Math.max(0, failures - 1));
  const jittered = random() * ceiling;
  const wait = retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
  return Math.max(MIN_WAIT_MS, Math.min(policy.capMs, wait));
}

/** Retry-After as delay-seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

export type NextStep = { giveUp: true } | { giveUp: false; at: Date };

/**
 * After a failed attempt: give up once `giveUpMs` have passed since the first failure,
 * otherwise the time of the next try (whole seconds, never past the give-up time, so the
 * last try falls on it).
 */
export function nextStep(policy: BackoffPolicy, state: { failures: number; firstFailure: Date; now: Date; retryAfterMs?: number; random: () => number }): NextStep {
  const deadline = state.firstFailure.getTime() + policy.giveUpMs;
  if (state.now.getTime() >= deadline) return { giveUp: true };
  const wanted = state.now.getTime() + retryDelayMs(policy, state.failures, state.random, state.retryAfterMs);
  const at = Math.ceil(Math.min(wanted, deadline) / 1000) * 1000;
  return { giveUp: false, at: new Date(at) };
}
