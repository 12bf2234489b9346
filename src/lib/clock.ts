// Time is injected so tests can age accounts past the Free plan's 365 days.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with Z and no milliseconds, the one timestamp format on the wire. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
