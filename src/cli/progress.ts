// Progress of long work on stderr: a spinner line on a colour terminal, a plain log line
// every few seconds otherwise (pipes, CI, NO_COLOR, TERM=dumb), nothing with --quiet or
// --json (stdout stays data only).
import type { IO } from './io.js';
import type { Progress } from '../ops/progress.js';

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
