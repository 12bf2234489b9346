// Where a `ferry sync --wait` run keeps its journal (ops/sync/journal.ts): beside the results
// file it was given, as `migrate tokens` keeps its own (`<results>.sync-journal`), so a rerun
// from any machine that shares the folder finds it; for companies given by id, in the state
// dir ($XDG_STATE_HOME/ferry/syncs/, default ~/.local/state), under a name made from the
// target, the data type and the companies, so the same command finds the same run. There,
// `<name>.csv` is the list of those companies, written when the command that resumes them
// would be too long to print with every id.
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const JOURNAL_SUFFIX = '.sync-journal';

export interface RunFiles {
  journal: string;
  /** Companies given by id: the list to resume them from (written on demand, see writeCompanyList). */
  companyList?: string;
}

/** The state dir of sync runs. */
export function syncStateDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'ferry', 'syncs');
}

/**
 * The service a run talks to, as its journal records it: the URL, or the embedded service's
 * data dir (its port changes every run). The engine adds the account the key acts for.
 */
export function targetOf(where: { embedded: true; dataDir: string } | { embedded: false; baseUrl: string }): string {
  return where.embedded ? `embedded ${resolve(where.dataDir)}` : where.baseUrl.replace(/\/+$/, '');
}

export function runFiles(run: { fromResults?: string; companyIds: string[]; dataType?: string; target: string }, env: NodeJS.ProcessEnv): RunFiles {
  if (run.fromResults !== undefined) return { journal: `${run.fromResults}${JOURNAL_SUFFIX}` };
  const key = createHash('sha256').update(JSON.stringify([run.target, run.dataType ?? '', [...run.companyIds].sort()])).digest('hex').slice(0, 20);
  const companyList = join(syncStateDir(env), `${key}.csv`);
  return { journal: `${companyList}${JOURNAL_SUFFIX}`, companyList };
}

/** Makes the folder the journal goes in (the state dir: private to the user); throws when it cannot be written in. */
export function prepareJournalDir(files: RunFiles): void {
  if (files.companyList) mkdirSync(dirname(files.journal), { recursive: true, mode: 0o700 });
  accessSync(dirname(files.journal), constants.W_OK);
}

/** Writes the companies of a run given by id as a one-column CSV that `--from-results` reads. */
export function writeCompanyList(path: string, companyIds: string[]): void {
  writeFileSync(path, `companyId\n${companyIds.join('\n')}\n`, { mode: 0o600 });
}

/** A run that reached its end: a company list made for it in the state dir goes with its journal. */
export function removeCompanyList(files: RunFiles, fromResults: string | undefined, env: NodeJS.ProcessEnv): void {
  if (files.companyList) rmSync(files.companyList, { force: true });
  if (fromResults !== undefined && resolve(dirname(fromResults)) === resolve(syncStateDir(env))) rmSync(fromResults, { force: true });
}
