// Resume state of an export to a file. Beside the final name (never under it) an export
// keeps, until it completes:
//   .NAME.ferry-part            the document so far
//   .NAME.ferry-part.json       the checkpoint: arguments, byte length and position after the last complete page
//   .NAME.ferry-part.companies  (--all-companies) the company list taken when the export started, one JSON line each
//   .NAME.ferry-part.journal    (--all-companies) one JSON line per company finished or skipped
//   .NAME.ferry-part.lock       the pid of the ferry process writing them
// The checkpoint is replaced (temp + rename) after a page's bytes were written (at most
// every quarter second, and when the export stops), so it never claims bytes that are not
// in the part file. `--resume` cuts the part file back to
// the checkpoint's length and goes on with the next page.
import { replaceFile } from '../../lib/atomic-file.js';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { TrackerState } from './bookmark.js';
import type { EncoderState, Format } from './writers.js';

export const CHECKPOINT_VERSION = 1;

export interface PartPaths {
  part: string;
  checkpoint: string;
  companies: string;
  journal: string;
  lock: string;
}

export function partPaths(out: string): PartPaths {
  const base = join(dirname(out), `.${basename(out)}.ferry-part`);
  return { part: base, checkpoint: `${base}.json`, companies: `${base}.companies`, journal: `${base}.journal`, lock: `${base}.lock` };
}

/** What must be the same for `--resume` to continue an export. */
export interface ExportArgs {
  dataType: string;
  /** The company id, or `*` for --all-companies. */
  scope: string;
  query: string | null;
  orderBy: string | null;
  pageSize: number;
  format: Format;
  /** Digest of the --state file's content when the export started (`none` without --state). */
  state: string;
}

/** Where the export stands inside the current company. */
export interface CompanyPosition {
  /** Index in the export's company list. */
  index: number;
  id: string;
  /** Pages of this company completely written. */
  pagesDone: number;
  /** totalResults the company's first page reported. */
  total?: number;
  /** The data set's latestSuccessfulSyncId when this company's export began (its snapshot). */
  snapshot?: string;
  /** Where the company began, to start it again if its data set is resynced under us. */
  startBytes: number;
  startRecords: number;
  startEncoder: EncoderState;
  bookmark: TrackerState;
}

export interface Checkpoint {
  version: number;
  args: ExportArgs;
  startedAt: string;
  /** Complete bytes of the part file. */
  bytes: number;
  /** Records written so far (all companies). */
  records: number;
  encoder: EncoderState;
  /** Companies in the list (1 with --company). */
  companies: number;
  company: CompanyPosition;
}

export function saveCheckpoint(paths: PartPaths, checkpoint: Checkpoint): void {
  replaceFile(paths.checkpoint, JSON.stringify(checkpoint));
}

export function readCheckpoint(paths: PartPaths): Checkpoint | undefined {
  try {
    const parsed = JSON.parse(readFileSync(paths.checkpoint, 'utf8')) as Checkpoint;
    return parsed.version === CHECKPOINT_VERSION && parsed.args && parsed.company ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The arguments that differ between an interrupted export and this one, as flag names. */
export function argsDiffer(saved: ExportArgs, now: ExportArgs): string[] {
  const names: Record<keyof ExportArgs, string> = {
    dataType: 'DATA_TYPE', scope: '--company/--all-companies', query: '--query', orderBy: '--order-by', pageSize: '--page-size', format: '--format', state: '--state (its content)',
  };
  return (Object.keys(names) as Array<keyof ExportArgs>).filter((k) => saved[k] !== now[k]).map((k) => names[k]);
}

/** Bytes in the part file, or -1 when it is missing. */
export function partLength(paths: PartPaths): number {
  try {
    return statSync(paths.part).size;
  } catch {
    return -1;
  }
}

export function removeParts(paths: PartPaths): void {
  for (const path of [paths.part, paths.checkpoint, `${paths.checkpoint}.tmp`, paths.companies, paths.journal]) rmSync(path, { force: true });
}

// ---- Company list and journal (--all-companies) ----

export interface ListedCompany {
  id: string;
  name: string;
}

export function saveCompanies(paths: PartPaths, companies: ListedCompany[]): void {
  replaceFile(paths.companies, companies.map((c) => JSON.stringify({ id: c.id, name: c.name })).join('\n') + (companies.length ? '\n' : ''));
}

export function readCompanies(paths: PartPaths): ListedCompany[] | undefined {
  if (!existsSync(paths.companies)) return undefined;
  try {
    return readFileSync(paths.companies, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as ListedCompany);
  } catch {
    return undefined;
  }
}

export type JournalEntry =
  | { companyId: string; outcome: 'exported'; records: number; bookmark: TrackerState }
  | { companyId: string; outcome: 'skipped'; status: number; reason: string; name: string };

export function appendJournal(paths: PartPaths, entry: JournalEntry): void {
  appendFileSync(paths.journal, `${JSON.stringify(entry)}\n`);
}

/** The journal's entries by company (the last line for a company wins; a torn last line is ignored). */
export function readJournal(paths: PartPaths): Map<string, JournalEntry> {
  const entries = new Map<string, JournalEntry>();
  if (!existsSync(paths.journal)) return entries;
  for (const line of readFileSync(paths.journal, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      const entry = JSON.parse(line) as JournalEntry;
      entries.set(entry.companyId, entry);
    } catch {
      // a line cut short by a kill
    }
  }
  return entries;
}

// ---- Lock ----

/**
 * Takes the part files for this process: refuses while another live ferry process holds
 * them, takes over a lock left by a process that died. Returns the owner pid that refused.
 */
export function acquireLock(paths: PartPaths): { ok: true } | { ok: false; pid: number } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(paths.lock, String(process.pid), { flag: 'wx' });
      return { ok: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number.parseInt(readFileSafe(paths.lock), 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) return { ok: false, pid };
    rmSync(paths.lock, { force: true });
  }
  return { ok: false, pid: Number.parseInt(readFileSafe(paths.lock), 10) || 0 };
}

export function releaseLock(paths: PartPaths): void {
  if (readFileSafe(paths.lock) === String(process.pid)) rmSync(paths.lock, { force: true });
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
