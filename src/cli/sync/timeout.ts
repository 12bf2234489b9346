// How long `ferry sync --wait` waits by default: long enough for the number of companies
// (docs/cli.md, "--timeout"), and the line that says so at the start.
import { durationText } from '../../lib/duration.js';
import { formatCount } from '../../ops/progress.js';

/** Whatever the count: queuing, the first pulls, a service that is busy with other work. */
export const BASE_WAIT_MS = 10 * 60_000;
/**
 * Each company adds half a second. Measured on a 2-core machine against `ferry serve` on
 * SQLite: 2,000 companies of 23 data types synced in about 390 s (0.2 s a company), 5,000 of
 * 3 data types in about 14 min with other work on the machine (0.17 s): half a second
 * leaves room for a busier service (docs/cli.md, "--timeout").
 */
export const PER_COMPANY_MS = 500;

export function defaultSyncTimeoutMs(companies: number): number {
  return BASE_WAIT_MS + PER_COMPANY_MS * companies;
}

/** "Waiting at most 35m for 3,000 companies (until 14:37:02; 10m + 0.5s a company: --timeout changes it)." */
export function waitLine(companies: number, timeoutMs: number, given: boolean, now = Date.now()): string {
  const until = new Date(now + timeoutMs).toTimeString().slice(0, 8);
  const rule = given ? 'set by --timeout' : `${durationText(BASE_WAIT_MS)} + ${PER_COMPANY_MS / 1000}s a company: --timeout changes it`;
  return `Waiting at most ${durationText(timeoutMs)} for ${formatCount(companies)} compan${companies === 1 ? 'y' : 'ies'} (until ${until}; ${rule}).`;
}
