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

const code = await runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }, controller.signal);
// Let stdout drain before exiting, so piped output is never cut short.
process.stdout.write('', () => process.exit(code));
