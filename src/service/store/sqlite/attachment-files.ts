// Where the SQLite store keeps attachment bytes: one file per attachment, in
// <data-dir>/attachments/<id>, beside ferry.db; the row holds the rest. Measured on the
// 2-core machine of docs/performance.md, with the bytes in a BLOB column: one 10 MiB
// INSERT took 60-240 ms (median 95) synchronously on the request thread, the WAL
// checkpoint it set off included; a 10 MiB read 10-12 ms; deleting 26 such rows, as one
// company's deletion did, 230 ms, after which the file kept its 273 MB (freed pages go
// back to the file system only with VACUUM). A worker thread writing the blob would still
// have made every write of the request thread wait, synchronously, on the write lock. As
// a file, the upload is written by the thread pool as it streams in and moved into place
// with one rename, read back as a stream, and its space is the file system's again the
// moment it is removed.
//
// A file must follow its row's fate: kept if the row commits, gone if it rolls back or is
// deleted. So every id whose file this connection moved in or whose row it deleted is
// noted, and once no transaction is open (the store's transactions call settleFiles when
// they end) each noted file is removed unless its row exists. That check makes settling
// safe whenever it runs. A crash between a commit and the settling leaves a file without a
// row; the next start removes it (reconcileFiles).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Db } from './db.js';
import { prepared } from './statements.js';

/** Ids noted per connection, awaiting their transaction's end. */
const noted = new WeakMap<Db, Set<string>>();

function filesDir(db: Db): string {
  return join(dirname(db.name), 'attachments');
}

/** Where an attachment's bytes are. */
export function attachmentFile(db: Db, id: string): string {
  return join(filesDir(db), id);
}

function note(db: Db, ids: readonly string[]): void {
  if (ids.length === 0) return;
  let set = noted.get(db);
  if (!set) noted.set(db, (set = new Set()));
  for (const id of ids) set.add(id);
}

/** Moves a staged upload (a file on the data dir's file system) into place as attachment `id`'s bytes. */
export function placeFile(db: Db, id: string, staged: string): void {
  mkdirSync(filesDir(db), { recursive: true, mode: 0o700 });
  note(db, [id]);
  renameSync(staged, attachmentFile(db, id));
}

/** Notes the attachments a deletion is about to remove, so their files go once it commits. */
export function noteDeleted(db: Db, ids: readonly string[]): void {
  note(db, ids);
}

/** Notes the files of what a company's or a connection's deletion is about to cascade to. */
export function noteCascade(db: Db, owner: { companyId: string } | { connectionId: string }): void {
  const ids = 'companyId' in owner
    ? prepared(db, 'SELECT id FROM attachments WHERE company_id = ?').pluck().all(owner.companyId)
    : prepared(db, 'SELECT id FROM attachments WHERE connection_id = ?').pluck().all(owner.connectionId);
  noteDeleted(db, ids as string[]);
}

/**
 * Outside a transaction, removes each noted file whose row does not exist (rolled back, or
 * deleted); inside one, does nothing yet. The removals run in the thread pool: nobody
 * waits for the space to come back.
 */
export function settleFiles(db: Db): void {
  const ids = noted.get(db);
  if (!ids || ids.size === 0 || db.inTransaction) return;
  noted.delete(db);
  const exists = prepared(db, 'SELECT 1 FROM attachments WHERE id = ?').pluck();
  for (const id of ids) {
    if (exists.get(id) === undefined) void rm(attachmentFile(db, id), { force: true }).catch(() => undefined);
  }
}

/**
 * At start, before anything else uses the store: writes out the bytes of rows stored when
 * they lived in the database, and removes files whose row is gone (a crash between a
 * commit and its settling).
 */
export function reconcileFiles(db: Db): void {
  const legacy = prepared(db, 'SELECT id FROM attachments WHERE content IS NOT NULL').pluck().all() as string[];
  if (legacy.length > 0) mkdirSync(filesDir(db), { recursive: true, mode: 0o700 });
  for (const id of legacy) {
    const content = prepared(db, 'SELECT content FROM attachments WHERE id = ?').pluck().get(id) as Buffer;
    const part = `${attachmentFile(db, id)}.part`;
    writeFileSync(part, content, { mode: 0o600 });
    renameSync(part, attachmentFile(db, id));
    prepared(db, 'UPDATE attachments SET content = NULL WHERE id = ?').run(id);
  }
  if (!existsSync(filesDir(db))) return;
  const exists = prepared(db, 'SELECT 1 FROM attachments WHERE id = ?').pluck();
  for (const name of readdirSync(filesDir(db))) {
    if (exists.get(name) === undefined) rmSync(join(filesDir(db), name), { force: true, recursive: true });
  }
}
