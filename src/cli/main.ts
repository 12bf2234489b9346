// The process entry point: the only place that calls process.exit. The first Ctrl-C asks
// the running command to stop cleanly; a second one exits at once (exit 130).
import { EXIT } from './errors.js';
import { runCli } from './program.js';

const controller = new AbortController();
let interrupts = 0;
const onSignal = (signal: NodeJS.Signals) => {
  interrupts += 1;
  if (interrupts > 1) process.exit(EXIT.interrupted);
  controller.abort(signal);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

// `ferry … | head`: the reader has all it wants. Stop as a pipeline expects, quietly and
// with success, instead of crashing on the next write (work in flight is abandoned as on Ctrl-C).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  controller.abort('SIGPIPE');
  process.exit(EXIT.ok);
});

const code = await runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }, controller.signal);
// Let stdout drain before exiting, so piped output is never cut short.
process.stdout.write('', () => process.exit(code));
