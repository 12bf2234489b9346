// The command that resumes a stopped `ferry sync --wait`, as the person can run it: the
// target and output flags they gave, the same companies and data type, and every flag that
// shapes the wait, never --force (which would queue everything again). Companies given by
// id are listed when they fit on a line; past that, they are written to a list in the state
// dir (run-files.ts) and the command reads it with --from-results, which finds the same journal.
import type { GlobalFlags } from '../globals.js';
import { shellQuote } from '../command-line.js';
import { durationText } from '../../lib/duration.js';

/** Longer than this, the ids go to a file: the command must stay a line a person can copy. */
const MAX_LENGTH = 400;

/** The flags of the run that shape its wait, named as `ferry sync`'s options are. */
export interface ResumeFlags {
  fromResults?: string;
  /** The data type's key. */
  dataType?: string;
  /** --timeout in ms, when it was given. */
  timeout?: number;
  concurrency?: number;
  maxRate?: number;
  /** false: --no-events was given. */
  events?: boolean;
  pollMs?: number;
}

export { shellQuote as shellWord } from '../command-line.js';

/**
 * `companyIds`: those given by id (not the results file's). `listFile` writes them to a file
 * and returns its path; it is called only when they do not fit on the line.
 */
export function resumeCommand(flags: GlobalFlags, run: ResumeFlags, companyIds: string[], listFile?: () => string): string {
  const globals: string[] = [];
  if (flags.baseUrl !== undefined) globals.push('--base-url', flags.baseUrl);
  if (flags.profile !== undefined) globals.push('--profile', flags.profile);
  if (flags.apiKeyFile !== undefined) globals.push('--api-key-file', flags.apiKeyFile);
  if (flags.client !== undefined) globals.push('--client', flags.client);
  if (flags.dataDir !== undefined) globals.push('--data-dir', flags.dataDir);
  if (flags.json) globals.push('--json');
  if (flags.quiet) globals.push('--quiet');
  const rest: string[] = [];
  if (run.dataType !== undefined) rest.push('--data-type', run.dataType);
  rest.push('--wait');
  // Whole seconds read best (10m); anything finer is given in ms, so the wait is the same.
  if (run.timeout !== undefined) rest.push('--timeout', run.timeout % 1000 === 0 ? durationText(run.timeout) : `${run.timeout}ms`);
  if (run.concurrency !== undefined) rest.push('--concurrency', String(run.concurrency));
  if (run.maxRate !== undefined) rest.push('--max-rate', String(run.maxRate));
  if (run.events === false) rest.push('--no-events');
  if (run.pollMs !== undefined) rest.push('--poll-ms', String(run.pollMs));
  const line = (companies: string[]) => ['ferry', ...globals, 'sync', ...companies, ...rest].map(shellQuote).join(' ');
  const full = line([...companyIds, ...(run.fromResults !== undefined ? ['--from-results', run.fromResults] : [])]);
  if (full.length <= MAX_LENGTH || !listFile || run.fromResults !== undefined) return full;
  return line(['--from-results', listFile()]);
}
