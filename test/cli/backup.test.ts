// `ferry admin backup --out FILE` (in this process, as the binary runs it) against a
// `ferry serve` that keeps serving and syncing meanwhile, and the restore docs/operations.md
// gives: the copy as <data-dir>/ferry.db, its attachments as <data-dir>/attachments, the
// token-encryption key put back. `ferry serve --data-dir` over it answers every company,
// connection, data set, attachment and webhook consumer as before, and syncs again with
// the tokens it holds, so they still decrypt. Without the key the start is refused. On
// PostgreSQL the command says to use pg_dump.
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { basic, tempDir } from '../helpers/service.js';
import { startTestStack, type ServeHandle, type TestSandbox } from '../helpers/stack.js';
import { apiClient, linkedCompany, readAll, trustSandbox, waitFor, type Api, type Linked } from '../helpers/sync.js';
import { SANDBOX_ADMIN_KEY } from '../sandbox/support.js';

const COMPANIES = 3;

/** Every pull of the company ended. */
async function synced(api: Api, companyId: string): Promise<Array<{ status: string; dataType: string }>> {
  return waitFor('the sync to end', async () => {
    const history = await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`);
    const pulls = history.body.results as Array<{ status: string; dataType: string }>;
    return pulls.length > 0 && pulls.every((p) => !['Queued', 'Fetching', 'Mapping'].includes(p.status)) && pulls;
  }, 30_000, 100);
}

/** What a client sees of the service: companies, their connections and invoices, attachments, webhook consumers. */
async function view(api: Api, companies: Linked[], attachmentPath: string): Promise<Record<string, unknown>> {
  const all = await api.call('GET', '/companies?pageSize=100');
  const each = [];
  for (const { companyId } of companies) {
    each.push({
      connections: (await api.call('GET', `/companies/${companyId}/connections`)).body,
      invoices: await readAll(api, companyId, 'invoices'),
      customers: await readAll(api, companyId, 'customers'),
    });
  }
  const attachment = await fetch(`${api.baseUrl}${attachmentPath}/download`, { headers: { authorization: basic(apiKeyOf(api)) } });
  const seen = {
    companies: all.body.results, each,
    consumers: (await api.call('GET', '/webhooks')).body,
    attachment: Buffer.from(await attachment.arrayBuffer()).toString('base64'),
  };
  // Links are built on the address the service listens at; lastSync moves with the syncs that run while the copy is taken.
  return JSON.parse(JSON.stringify(seen).replaceAll(api.baseUrl, '<service>').replace(/"lastSync":"[^"]*"/g, '"lastSync":"<a sync>"')) as Record<string, unknown>;
}

const keys = new WeakMap<Api, string>();
const apiKeyOf = (api: Api) => keys.get(api)!;
function clientApi(baseUrl: string, apiKey: string): Api {
  const api = apiClient(baseUrl, apiKey);
  keys.set(api, apiKey);
  return api;
}

describe('backup and restore of the SQLite service', () => {
  let sandbox: TestSandbox;
  let serve: ServeHandle;
  let api: Api;
  let apiKey: string;
  const companies: Linked[] = [];
  let attachmentPath: string;
  const root = tempDir('ferry-backup-');

  beforeAll(async () => {
    sandbox = await startTestStack('sandbox');
    serve = await startTestStack('serve', { dataDir: join(root, 'data'), args: ['--sandbox-url', sandbox.url, '--log-format', 'off'] });
    // The serve helper trusts its service's admin key for the sandbox; this sandbox has its own.
    trustSandbox(sandbox.url, SANDBOX_ADMIN_KEY);
    apiKey = (await serve.api.call('POST', '/admin/clients', { body: { name: 'Backed Up Ltd', plan: 'Paid' } })).body.apiKey;
    api = clientApi(serve.baseUrl, apiKey);
    for (let i = 0; i < COMPANIES; i++) companies.push(await linkedCompany(api, sandbox.url, 'gbol', 4 + i, { apiKey, name: `Kept ${i}` }));
    for (const { companyId } of companies) {
      expect((await api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
      await synced(api, companyId);
    }
    const [first] = companies;
    const invoice = (await readAll(api, first!.companyId, 'invoices'))[0];
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('a scanned invoice')], { type: 'application/pdf' }), 'scan.pdf');
    const base = `/companies/${first!.companyId}/connections/${first!.connectionId}`;
    const uploaded = await fetch(`${serve.baseUrl}${base}/push/invoices/${invoice.id}/attachment`, { method: 'POST', headers: { authorization: basic(apiKey) }, body: form });
    expect(uploaded.status).toBe(200);
    attachmentPath = `${base}/data/invoices/${invoice.id}/attachments/${((await uploaded.json()) as { id: string }).id}`;
    expect((await api.call('POST', '/webhooks', { body: { url: 'https://hooks.example.com/kept', eventTypes: ['company.created'] } })).status).toBe(201);
  });
  afterAll(async () => {
    await serve?.stop();
    await sandbox?.stop();
  });

  it('copies the service while it serves and syncs, and the copy serves everything as before once restored', async () => {
    const before = await view(api, companies, attachmentPath);
    // Syncing and writing while the copy is taken.
    for (const { companyId } of companies) expect((await api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const made = await api.call('POST', '/companies', { body: { name: `During ${i}` } });
        written.push(made.body.id);
      }
    })();
    const out = join(root, 'ferry-backup.db');
    const result = await ferry(['admin', 'backup', '--out', out, '--data-dir', serve.dataDir, '--json']);
    writing = false;
    await writer;
    expect(result.code, result.stderr).toBe(0);
    const line = JSON.parse(result.stdout);
    expect(line).toEqual({
      event: 'backup', out, bytes: statSync(out).size, attachments: 1, attachmentsDir: `${out}.attachments`, secretKey: join(serve.dataDir, 'secret.key'),
    });
    expect((statSync(out).mode & 0o777).toString(8)).toBe('600');
    // One file, one snapshot: no -wal beside it, and the companies written meanwhile are a prefix of the order they were made in.
    expect(existsSync(`${out}-wal`)).toBe(false);
    const copy = new Database(out, { readonly: true });
    const held = new Set(copy.prepare('SELECT id FROM companies').pluck().all() as string[]);
    copy.close();
    const kept = written.filter((id) => held.has(id));
    expect(written.slice(0, kept.length)).toEqual(kept);
    for (const { companyId } of companies) await synced(api, companyId);
    await serve.stop();

    // The restore: the copy, its attachments and the key, in a data dir of their own.
    const restored = join(root, 'restored');
    mkdirSync(restored, { mode: 0o700 });
    copyFileSync(out, join(restored, 'ferry.db'));
    cpSync(`${out}.attachments`, join(restored, 'attachments'), { recursive: true });
    writeFileSync(join(restored, 'secret.key'), readFileSync(join(serve.dataDir, 'secret.key')), { mode: 0o600 });
    serve = await startTestStack('serve', { dataDir: restored, args: ['--sandbox-url', sandbox.url, '--log-format', 'off'] });
    api = clientApi(serve.baseUrl, apiKey);
    const after = await view(api, companies, attachmentPath);
    const held2 = (after.companies as Array<{ id: string }>).filter((c) => !written.includes(c.id));
    expect({ ...after, companies: held2 }).toEqual(before);
    // The tokens open: every company syncs again from the platform with the ones restored
    // (a pull the copy caught open is resumed, and a new one queued after it).
    for (const { companyId } of companies) await synced(api, companyId);
    const queued: string[] = [];
    for (const { companyId } of companies) {
      const pull = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
      expect(pull.status, pull.text).toBe(200);
      queued.push(pull.body.id);
    }
    for (const [i, { companyId }] of companies.entries()) {
      await synced(api, companyId);
      expect((await api.call('GET', `/companies/${companyId}/data/history/${queued[i]}`)).body.status).toBe('Complete');
    }
  });

  it('refuses to start a restored copy without its key, rather than seal with a new one', async () => {
    const bare = join(root, 'no-key');
    mkdirSync(bare, { mode: 0o700 });
    copyFileSync(join(root, 'ferry-backup.db'), join(bare, 'ferry.db'));
    const started = await ferry(['serve', '--port', '0', '--data-dir', bare, '--sandbox-url', sandbox.url]);
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`${join(bare, 'ferry.db')} is there but ${join(bare, 'secret.key')} is not`);
    expect(existsSync(join(bare, 'secret.key'))).toBe(false);
  });

  it('refuses what it cannot copy: no service in the data dir, a file in the way, PostgreSQL', async () => {
    const nothing = await ferry(['admin', 'backup', '--out', join(root, 'x.db'), '--data-dir', join(root, 'empty')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('holds no ferry service (no ferry.db)');
    const taken = await ferry(['admin', 'backup', '--out', join(root, 'ferry-backup.db'), '--data-dir', serve.dataDir]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('already exists; a backup never overwrites');
    for (const how of [['--database', 'postgres://ferry@db:5432/ferry'], []]) {
      const env: Record<string, string> = how.length === 0 ? { FERRY_DATABASE_URL: 'postgres://ferry@db:5432/ferry' } : {};
      const pg = await ferry(['admin', 'backup', '--out', join(root, 'pg.db'), ...how], { env });
      expect(pg.code).toBe(2);
      expect(pg.stderr).toContain('a PostgreSQL database is backed up with pg_dump');
      expect(pg.stderr).toContain('pg_dump --format=custom');
    }
    expect(existsSync(join(root, 'pg.db'))).toBe(false);
  });
});
