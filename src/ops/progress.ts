// Progress of long work as an engine reports it: the engine says what to show, and the
// caller decides where it goes (a spinner, log lines, nothing with --json).

export interface Progress {
  /** The current state, e.g. "1,200/5,000 rows · 340/s · ETA 11s". */
  update(text: string): void;
  /** Ends the progress with a final line (kept on screen). */
  done(text?: string): void;
  /** Ends it as failed. */
  fail(text?: string): void;
}

/** Starts showing progress with a first line; the command line passes its own. */
export type StartProgress = (text: string) => Promise<Progress>;

/** Shows nothing: for callers with no one to tell. */
export const silentProgress: StartProgress = async () => ({ update() {}, done() {}, fail() {} });

/** One formatter for every count (toLocaleString would build one per call, on every progress update). */
const COUNT = new Intl.NumberFormat('en-US');

export function formatCount(n: number): string {
  return COUNT.format(n);
}

/** A count and its noun, agreeing: `1 valid row`, `1,200 valid rows`. */
export function counted(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.round(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** "done/total · rate/s · ETA" from counts and the start time. */
export function rateLine(done: number, total: number | undefined, startedMs: number, unit: string, now: number = Date.now()): string {
  const seconds = Math.max(0.001, (now - startedMs) / 1000);
  const rate = done / seconds;
  const parts = [total !== undefined ? `${formatCount(done)}/${formatCount(total)} ${unit}` : `${formatCount(done)} ${unit}`, `${formatCount(Math.round(rate))}/s`];
  if (total !== undefined && rate > 0 && done < total) parts.push(`ETA ${formatDuration((total - done) / rate)}`);
  return parts.join(' · ');
}

/** "concurrency 23 · 410 req/s": an adaptive limit's window now, and the requests a second of late. */
export function limitText(limit: { concurrency: number; rate: number }): string {
  return `concurrency ${limit.concurrency} · ${formatCount(Math.round(limit.rate))} req/s`;
}
