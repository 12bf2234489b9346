// `ferry admin backup`: a consistent copy of the SQLite service, taken while it serves and
// syncs. The database is copied with SQLite's online backup API (better-sqlite3's
// backup()), all its pages in one step, so the copy is one snapshot: every transaction
// committed before it, none after, whatever the service writes meanwhile. The copy is a
// single file (rollback journal, no -wal beside it), checked with quick_check, 0600.
//
// Attachment bytes are files beside the database (attachment-files.ts), one per row, never
// changed once placed and removed only after their row's deletion commits. So every file
// present is linked into the backup before the snapshot (a link keeps a file that is
// removed meanwhile), those of rows committed between the two are linked after it, and
// those of rows the snapshot does not have are dropped: the copies are exactly the
// snapshot's. A row whose file was removed before it could be linked means its deletion
// committed after the snapshot; the copy is then taken again.
//
// The token-encryption key is not copied: a backup that carried its key would hand every
// token to whoever got hold of the backup. docs/operations.md says where to keep it.
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateFile } from '../../../lib/private-files.js';

export interface SqliteBackup {
  /** The database's copy. */
  out: string;
  bytes: number;
  /** The attachments' copies (`<out>.attachments/`), when the snapshot has any. */
  attachments?: { dir: string; files: number };
}

/** A backup that cannot be taken, in words for the person asking (no data dir, an output in the way). */
export class BackupRefused extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'BackupRefused';
  }
}

/** Snapshots in a row whose attachments kept being deleted under the copy: then it gives up. */
const ATTEMPTS = 3;
/** Every remaining page in one backup step: one read transaction, one snapshot. */
const ALL_PAGES = 0x7fffffff;

export const attachmentsDirOf = (out: string) => `${out}.attachments`;

export async function backupSqlite(dataDir: string, out: string): Promise<SqliteBackup> {
  const dbFile = join(dataDir, 'ferry.db');
  if (!existsSync(dbFile)) {
    throw new BackupRefused(`${dataDir} holds no ferry service (no ferry.db).`, 'Give the data dir the service runs with: --data-dir DIR (or FERRY_DATA_DIR).');
  }
  for (const path of [out, attachmentsDirOf(out)]) {
    if (existsSync(path)) throw new BackupRefused(`${path} already exists; a backup never overwrites.`, 'Give --out a new file name (a date in it, say), or remove the old one first.');
  }
  if (!existsSync(dirname(out))) throw new BackupRefused(`${dirname(out)} does not exist.`, 'Create the directory first, or give --out a path in one that exists.');
  const partial = `${out}.partial`;
  const staged = `${attachmentsDirOf(out)}.partial`;
  try {
    for (let attempt = 1; ; attempt++) {
      rmSync(partial, { force: true });
      rmSync(staged, { recursive: true, force: true });
      const files = await snapshot(dbFile, join(dataDir, 'attachments'), partial, staged);
      if (files !== undefined) return finish(partial, staged, out, files);
      if (attempt === ATTEMPTS) throw new Error(`attachments were deleted under the copy ${ATTEMPTS} times in a row; try again when fewer are being deleted`);
    }
  } finally {
    rmSync(partial, { force: true });
    rmSync(staged, { recursive: true, force: true });
  }
}

/** One try: the files first, then the database, then the files of rows committed in between. Undefined when a row's file was already gone. */
async function snapshot(dbFile: string, filesDir: string, partial: string, staged: string): Promise<number | undefined> {
  const present = existsSync(filesDir) ? readdirSync(filesDir) : [];
  if (present.length > 0) mkdirSync(staged, { mode: 0o700 });
  for (const id of present) keep(join(filesDir, id), join(staged, id));
  await copyDatabase(dbFile, partial);
  const ids = attachmentIds(partial);
  const wanted = new Set(ids);
  if (ids.length > 0) mkdirSync(staged, { recursive: true, mode: 0o700 });
  for (const id of ids) {
    if (existsSync(join(staged, id))) continue;
    if (!keep(join(filesDir, id), join(staged, id))) return undefined;
  }
  for (const id of present) if (!wanted.has(id)) rmSync(join(staged, id));
  return ids.length;
}

async function copyDatabase(dbFile: string, partial: string): Promise<void> {
  // A connection of its own (the service's are in another process, or this one's threads): it only reads.
  const source = new Database(dbFile, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    ensurePrivateFile(partial);
    await source.backup(partial, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
  const copy = new Database(partial);
  try {
    // One file: the copy needs no -wal beside it to be read or restored.
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy failed SQLite's quick_check: ${String(check)}`);
  } finally {
    copy.close();
  }
}

/** The attachment rows of the copy whose bytes are files (older rows kept theirs in the row until the next start moves them out). */
function attachmentIds(copyFile: string): string[] {
  const copy = new Database(copyFile, { readonly: true });
  try {
    return copy.prepare('SELECT id FROM attachments WHERE content IS NULL').pluck().all() as string[];
  } finally {
    copy.close();
  }
}

/** A link to `from` at `to` (a copy across file systems); false when `from` is gone. */
function keep(from: string, to: string): boolean {
  try {
    linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EXDEV' && code !== 'EPERM') throw err;
    try {
      copyFileSync(from, to);
    } catch (copyErr) {
      if ((copyErr as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw copyErr;
    }
  }
  return true;
}

function finish(partial: string, staged: string, out: string, files: number): SqliteBackup {
  renameSync(partial, out);
  const result: SqliteBackup = { out, bytes: statSync(out).size };
  if (files > 0) {
    renameSync(staged, attachmentsDirOf(out));
    result.attachments = { dir: attachmentsDirOf(out), files };
  }
  return result;
}
