// The SQLite store's attachment files (attachment-files.ts): a file follows its row's fate
// (kept when the row commits, gone when it rolls back or is deleted, kept when a deletion
// rolls back), a database from before keeps its files (the bytes move out of their rows at
// the next start), and a start removes files without a row and stale staged uploads.
import Database from 'better-sqlite3';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createService } from '../../src/service/app.js';
import { loadSecretKey } from '../../src/service/secrets.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import type { AttachmentInput } from '../../src/service/store/attachments.js';
import { applyMigrations, listMigrations, openDatabase } from '../../src/service/store/sqlite/db.js';
import { openStore } from '../../src/service/store/open-store.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';

const T0 = '2026-01-01T00:00:00Z';
const LIMITS = { quotaBytes: 1024 ** 3, perRecord: 20 };
const stores: AsyncStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function owned(store: AsyncStore) {
  const client = await store.insertClient({ name: 'Acme', plan: 'Paid', created: T0 });
  const company = await store.insertCompany(client.id, { name: 'A', tags: {} }, T0);
  const connection = await store.insertConnection(company.id, 'gbol', 'xero', T0);
  return { client, company, connection };
}

function row(o: Awaited<ReturnType<typeof owned>>, id: string, size: number): AttachmentInput {
  return {
    id, client_id: o.client.id, company_id: o.company.id, connection_id: o.connection.id, data_type: 'invoices', record_id: 'inv-1',
    file_name: `${id}.pdf`, content_type: 'application/pdf', size, sha256: 'x', created: T0,
  };
}

function stage(dir: string, bytes: Buffer): string {
  const path = join(dir, `staged-${Math.random()}`);
  writeFileSync(path, bytes);
  return path;
}

describe('attachment files on SQLite', () => {
  it('a file is kept when its row commits and goes when the row rolls back or is deleted; a rolled-back deletion keeps it', async () => {
    const dir = tempDir();
    const store = sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')));
    stores.push(store);
    const o = await owned(store);
    const file = (id: string) => join(dir, 'attachments', id);

    await store.transaction(async (tx) => tx.insertAttachment(row(o, 'kept', 3), stage(dir, Buffer.from('abc')), LIMITS));
    expect(readFileSync(file('kept'), 'utf8')).toBe('abc');

    await expect(store.transaction(async (tx) => {
      await tx.insertAttachment(row(o, 'undone', 3), stage(dir, Buffer.from('xyz')), LIMITS);
      expect(existsSync(file('undone'))).toBe(true);
      throw new Error('the request failed after the insert');
    })).rejects.toThrow('the request failed');
    await waitFor('the rolled-back file to go', async () => !existsSync(file('undone')));

    // A taken id never overwrites the file that has it.
    await expect(store.insertAttachment(row(o, 'kept', 3), stage(dir, Buffer.from('new')), LIMITS)).rejects.toThrow();
    expect(readFileSync(file('kept'), 'utf8')).toBe('abc');

    await expect(store.transaction(async (tx) => {
      await tx.deleteCompany(o.company.id);
      throw new Error('the deletion failed after the delete');
    })).rejects.toThrow('the deletion failed');
    expect(await store.attachmentBytesUsed(o.client.id)).toBe(3);
    expect(existsSync(file('kept'))).toBe(true);

    await store.transaction(async (tx) => tx.deleteCompany(o.company.id));
    await waitFor('the deleted company\'s file to go', async () => !existsSync(file('kept')));
    expect(await store.attachmentBytesUsed(o.client.id)).toBe(0);
  });

  it('a database from before keeps its files: the next start moves their bytes out of the rows and counts them', async () => {
    const dataDir = tempDir();
    // The schema as it was before attachment space (migrations up to 008).
    const old = join(tempDir(), 'migrations');
    mkdirSync(old);
    const current = listMigrations();
    for (const m of current.filter((m) => m.version <= 8)) writeFileSync(join(old, m.name), m.sql);
    const db = new Database(join(dataDir, 'ferry.db'));
    db.pragma('foreign_keys = ON');
    applyMigrations(db, old);
    db.prepare("INSERT INTO clients (id, name, plan, created) VALUES ('c1', 'Acme', 'Paid', ?)").run(T0);
    db.prepare("INSERT INTO companies (id, client_id, name, created) VALUES ('co1', 'c1', 'A', ?)").run(T0);
    db.prepare("INSERT INTO connections (id, company_id, integration_key, source_id, status, created) VALUES ('n1', 'co1', 'gbol', 'xero', 'Linked', ?)").run(T0);
    const bytes = Buffer.from([0, 1, 2, 255, 7]);
    db.prepare(`INSERT INTO attachments (id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, content, created)
      VALUES ('a1', 'co1', 'n1', 'invoices', 'inv-1', 'scan.pdf', 'application/pdf', ?, 'x', ?, ?)`).run(bytes.length, bytes, T0);
    db.close();

    const opened = await openStore({ dataDir, keyCheck: 'unused on SQLite' });
    stores.push(opened.store);
    const body = await opened.store.attachmentBody('a1');
    expect(body).toEqual({ file: join(dataDir, 'attachments', 'a1') });
    expect(readFileSync(join(dataDir, 'attachments', 'a1')).equals(bytes)).toBe(true);
    expect(await opened.store.attachmentBytesUsed('c1')).toBe(bytes.length);
    expect(await opened.store.getAttachment({ connectionId: 'n1', dataType: 'invoices', recordId: 'inv-1' }, 'a1')).toMatchObject({ client_id: 'c1', size: 5 });
    if (opened.kind !== 'sqlite') throw new Error('expected SQLite');
    expect(opened.db.prepare('SELECT count(*) FROM attachments WHERE content IS NOT NULL').pluck().get()).toBe(0);
  });

  it('the service\'s start removes files without a row, and staged uploads older than any upload could be', async () => {
    const dataDir = tempDir();
    // The data dir's key first, as the service makes it: a database without one is refused (secrets.ts).
    loadSecretKey(dataDir);
    const first = await openStore({ dataDir, keyCheck: 'unused on SQLite' });
    const o = await owned(first.store);
    await first.store.insertAttachment(row(o, 'live', 4), stage(dataDir, Buffer.from('live')), LIMITS);
    await first.store.close();
    writeFileSync(join(dataDir, 'attachments', 'orphan'), 'a crash left me');
    cpSync(join(dataDir, 'attachments', 'live'), join(dataDir, 'attachments', 'live.part'));
    const uploads = join(dataDir, 'uploads');
    mkdirSync(uploads);
    writeFileSync(join(uploads, 'old.upload'), 'x');
    const hoursAgo = (Date.now() - 2 * 60 * 60 * 1000) / 1000;
    utimesSync(join(uploads, 'old.upload'), hoursAgo, hoursAgo);
    writeFileSync(join(uploads, 'arriving.upload'), 'x');

    const service = await createService({ dataDir, rateLimit: 0 });
    await service.close();
    expect(readdirSync(join(dataDir, 'attachments'))).toEqual(['live']);
    expect(readdirSync(uploads)).toEqual(['arriving.upload']);
  });
});
