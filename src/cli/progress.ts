// Progress of long work on stderr: a spinner line on a colour terminal, a plain log line
// every few seconds otherwise (pipes, CI, NO_COLOR, TERM=dumb), nothing with --quiet or
// --json (stdout stays data only).
import type { IO } from './io.js';

export interface Progress {
  /** The current state, e.g. "1,200/5,000 rows · 340/s · ETA 11s". */
  update(text: string): void;
  /** Ends the progress with a final line (kept on screen). */
  done(text?: string): void;
  /** Ends it as failed. */
  fail(text?: string): void;
}

const LOG_EVERY_MS = 5000;

export async function startProgress(io: IO, text: string, now: () => number = Date.now): Promise<Progress> {
  if (io.quiet || io.mode === 'json') return { update() {}, done() {}, fail() {} };
  // A spinner redraws one line with escape codes: only on a terminal that wants colour
  // and says how wide it is (ora loops forever on a terminal of 0 columns).
  const columns = (io.stderr as { columns?: number }).columns ?? 0;
  if (io.stderrIsTTY && io.color && columns > 0) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text, stream: io.stderr, isEnabled: true, discardStdin: false }).start();
    return {
      update: (next) => {
        spinner.text = next;
      },
      done: (final) => void spinner.succeed(final ?? spinner.text),
      fail: (final) => void spinner.fail(final ?? spinner.text),
    };
  }
  let lastLog = now();
  let latest = text;
  io.err(text);
  return {
    update: (next) => {
      latest = next;
      if (now() - lastLog >= LOG_EVERY_MS) {
        lastLog = now();
        io.err(latest);
      }
    },
    done: (final) => io.err(final ?? latest),
    fail: (final) => io.err(final ?? latest),
  };
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
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
