// A circuit breaker per consumer, kept by the delivery loop (in memory: each loop learns on
// its own). After `failures` attempts in a row that got no answer (a timeout, a refused or
// reset connection, an unknown or unreachable host, a TLS failure), the consumer's deliveries
// wait `pauseMs`; then one trial attempt goes out (half-open). An answer, whatever its
// status, closes the breaker; a trial that gets none opens it again for twice as long, up
// to `maxPauseMs`. So a receiver that is down holds at most one slot, now and then, instead
// of one per lane. Its deliveries are not dropped: they wait, and the give-up rules apply
// to them as to any other.
import { isoSeconds } from '../../lib/clock.js';

export interface BreakerPolicy {
  failures: number;
  pauseMs: number;
  maxPauseMs: number;
}

export const DEFAULT_BREAKER: BreakerPolicy = { failures: 3, pauseMs: 30_000, maxPauseMs: 15 * 60_000 };

interface State {
  /** Attempts in a row without an answer. */
  failures: number;
  /** While open: how long it stays open, and until when (ms, a whole second). */
  pauseMs?: number;
  until?: number;
}

export interface BreakerView {
  /** Consumers whose breaker is open, with when it lets a trial through (ISO, whole seconds). */
  paused: Record<string, string>;
  /** Consumers on trial: one attempt at a time. */
  trials: string[];
}

/** Whole seconds, rounded up: deliveries are parked until a time stored to the second. */
const ceilSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;

export class Breakers {
  private readonly states = new Map<string, State>();

  constructor(private readonly policy: BreakerPolicy = DEFAULT_BREAKER) {}

  /** An attempt to `consumerId` that started at `startedAt` ended at `now`, with an answer or none. */
  attempted(consumerId: string, startedAt: Date, answered: boolean, now: Date): void {
    if (answered) {
      this.states.delete(consumerId);
      return;
    }
    const state = this.states.get(consumerId) ?? { failures: 0 };
    state.failures += 1;
    this.states.set(consumerId, state);
    if (state.until !== undefined) {
      // Only a trial (started once the pause was over) reopens it; attempts already in
      // flight when it opened say nothing new.
      if (startedAt.getTime() < state.until) return;
      state.pauseMs = Math.min(this.policy.maxPauseMs, state.pauseMs! * 2);
      state.until = ceilSecond(now.getTime() + state.pauseMs);
    } else if (state.failures >= this.policy.failures) {
      state.pauseMs = this.policy.pauseMs;
      state.until = ceilSecond(now.getTime() + state.pauseMs);
    }
  }

  /** What a claim at `now` must respect. */
  view(now: Date): BreakerView {
    const view: BreakerView = { paused: {}, trials: [] };
    for (const [consumerId, state] of this.states) {
      if (state.until === undefined) continue;
      if (state.until > now.getTime()) view.paused[consumerId] = isoSeconds(new Date(state.until));
      // No trial went out for a long while (nothing was due, or the consumer is gone): forget it.
      else if (now.getTime() - state.until > this.policy.maxPauseMs) this.states.delete(consumerId);
      else view.trials.push(consumerId);
    }
    return view;
  }
}
