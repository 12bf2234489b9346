// The sandbox's SQLite file (<dataDir>/sandbox.db) and the only code that speaks SQL to
// it. Its schema comes from the numbered files in ./migrations (lib/sqlite.ts applies them).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqlite } from '../lib/sqlite.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface AppRow {
  clientId: string;
  platform: string;
  name: string;
  secretHash: string;
  created: number;
}

export interface TenantRow {
  id: string;
  platform: string;
  orgId: string | null;
  name: string;
  seed: number;
  invoices: number;
  fields: Record<string, string>;
  legacyRefreshHash: string | null;
  created: number;
}

export interface TokenRow {
  hash: string;
  kind: 'access' | 'refresh';
  expiresAt: number | null;
  usedAt: number | null;
  grantId: string;
  clientId: string | null;
  revokedAt: number | null;
  revokedReason: string | null;
  tenantId: string;
  platform: string;
}

export type PushOp = 'Create' | 'Update' | 'Delete';

export interface PushRow {
  id: string;
  tenantId: string;
  dataType: string;
  op: PushOp;
  /** The record an update or delete names. */
  recordId: string | null;
  /** An update that skips the sourceModifiedDate check. */
  force: boolean;
  status: 'Pending' | 'Success' | 'Failed';
  payload: Record<string, unknown>;
  requested: number;
  completeAt: number;
  completed: number | null;
  recordSeq: number | null;
  /** The record as an update or delete left it. */
  result: Record<string, unknown> | null;
  errors: Array<{ field: string; message: string }> | null;
}

interface RawTenant {
  id: string;
  platform: string;
  org_id: string | null;
  name: string;
  seed: number;
  invoices: number;
  fields: string;
  legacy_refresh_hash: string | null;
  created: number;
}

interface RawPush {
  id: string;
  tenant_id: string;
  data_type: string;
  op: PushOp;
  record_id: string | null;
  force: number;
  status: PushRow['status'];
  payload: string;
  requested: number;
  complete_at: number;
  completed: number | null;
  record_seq: number | null;
  result: string | null;
  errors: string | null;
}

const tenantOf = (r: RawTenant): TenantRow => ({
  id: r.id,
  platform: r.platform,
  orgId: r.org_id,
  name: r.name,
  seed: r.seed,
  invoices: r.invoices,
  fields: JSON.parse(r.fields) as Record<string, string>,
  legacyRefreshHash: r.legacy_refresh_hash,
  created: r.created,
});

const pushOf = (r: RawPush): PushRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  dataType: r.data_type,
  op: r.op,
  recordId: r.record_id,
  force: r.force === 1,
  status: r.status,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  requested: r.requested,
  completeAt: r.complete_at,
  completed: r.completed,
  recordSeq: r.record_seq,
  result: r.result === null ? null : (JSON.parse(r.result) as Record<string, unknown>),
  errors: r.errors === null ? null : (JSON.parse(r.errors) as PushRow['errors']),
});

export type SandboxStore = ReturnType<typeof openSandboxStore>;

export function openSandboxStore(file: string) {
  const db = openSqlite(file, MIGRATIONS_DIR);
  return {
    transaction<T>(fn: () => T): T {
      return db.transaction(fn)();
    },
    close(): void {
      if (db.open) db.close();
    },
    ...appStatements(db),
    ...tenantStatements(db),
    ...tokenStatements(db),
    ...recordStatements(db),
    ...pushStatements(db),
  };
}

type Db = ReturnType<typeof openSqlite>;

/** OAuth apps and their callback URLs. */
function appStatements(db: Db) {
  const q = {
    insertApp: db.prepare('INSERT INTO apps (client_id, platform, name, secret_hash, created) VALUES (?, ?, ?, ?, ?)'),
    getApp: db.prepare('SELECT client_id AS clientId, platform, name, secret_hash AS secretHash, created FROM apps WHERE client_id = ?'),
    listApps: db.prepare(`SELECT client_id AS clientId, platform, name, secret_hash AS secretHash, created FROM apps
      WHERE (@platform IS NULL OR platform = @platform) ORDER BY rowid`),
    addCallback: db.prepare('INSERT OR IGNORE INTO app_callbacks (client_id, url, created) VALUES (?, ?, ?)'),
    removeCallback: db.prepare('DELETE FROM app_callbacks WHERE client_id = ? AND url = ?'),
    listCallbacks: db.prepare('SELECT url FROM app_callbacks WHERE client_id = ? ORDER BY created, rowid'),
  };
  return {
    insertApp(app: AppRow): void {
      q.insertApp.run(app.clientId, app.platform, app.name, app.secretHash, app.created);
    },
    getApp: (clientId: string) => q.getApp.get(clientId) as AppRow | undefined,
    listApps: (platform?: string) => q.listApps.all({ platform: platform ?? null }) as AppRow[],
    addCallback(clientId: string, url: string, at: number): void {
      q.addCallback.run(clientId, url, at);
    },
    /** Whether the URL was registered (and now is not). */
    removeCallback: (clientId: string, url: string) => q.removeCallback.run(clientId, url).changes > 0,
    listCallbacks: (clientId: string) => (q.listCallbacks.all(clientId) as Array<{ url: string }>).map((r) => r.url),
  };
}

/** Tenants, and the refreshes their legacy application made. */
function tenantStatements(db: Db) {
  const q = {
    insertTenant: db.prepare(`INSERT INTO tenants (id, platform, org_id, name, seed, invoices, fields, legacy_refresh_hash, created)
      VALUES (@id, @platform, @orgId, @name, @seed, @invoices, @fields, @legacyRefreshHash, @created)`),
    getTenant: db.prepare('SELECT * FROM tenants WHERE id = ?'),
    listTenants: db.prepare('SELECT * FROM tenants WHERE (@platform IS NULL OR platform = @platform) ORDER BY rowid'),
    orgTaken: db.prepare('SELECT 1 FROM tenants WHERE platform = ? AND org_id = ?'),
    setLegacyRefresh: db.prepare('UPDATE tenants SET legacy_refresh_hash = ? WHERE id = ?'),
    insertLegacy: db.prepare('INSERT INTO legacy_refreshes (tenant_id, at, outcome) VALUES (?, ?, ?)'),
    listLegacy: db.prepare('SELECT at, outcome FROM legacy_refreshes WHERE tenant_id = ? AND at >= ? ORDER BY at, id'),
  };
  return {
    insertTenant(t: TenantRow): void {
      q.insertTenant.run({ ...t, fields: JSON.stringify(t.fields) });
    },
    getTenant(id: string): TenantRow | undefined {
      const row = q.getTenant.get(id) as RawTenant | undefined;
      return row && tenantOf(row);
    },
    listTenants: (platform?: string) => (q.listTenants.all({ platform: platform ?? null }) as RawTenant[]).map(tenantOf),
    orgIdTaken: (platform: string, orgId: string) => q.orgTaken.get(platform, orgId) !== undefined,
    setLegacyRefresh(tenantId: string, hash: string | null): void {
      q.setLegacyRefresh.run(hash, tenantId);
    },
    insertLegacyRefresh(tenantId: string, at: number, outcome: string): void {
      q.insertLegacy.run(tenantId, at, outcome);
    },
    listLegacyRefreshes: (tenantId: string, since: number) => q.listLegacy.all(tenantId, since) as Array<{ at: number; outcome: string }>,
  };
}

/** Grants and the access and refresh tokens issued under them. */
function tokenStatements(db: Db) {
  const q = {
    insertGrant: db.prepare('INSERT INTO grants (id, tenant_id, client_id, created) VALUES (?, ?, ?, ?)'),
    revokeGrant: db.prepare('UPDATE grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL'),
    insertToken: db.prepare('INSERT INTO tokens (hash, grant_id, kind, expires_at, created) VALUES (?, ?, ?, ?, ?)'),
    getToken: db.prepare(`SELECT t.hash, t.kind, t.expires_at AS expiresAt, t.used_at AS usedAt, t.grant_id AS grantId,
        g.client_id AS clientId, g.revoked_at AS revokedAt, g.revoked_reason AS revokedReason, g.tenant_id AS tenantId, n.platform
      FROM tokens t JOIN grants g ON g.id = t.grant_id JOIN tenants n ON n.id = g.tenant_id WHERE t.hash = ?`),
    // Single use: only the first caller sees a change, so a concurrent second use is a reuse.
    useToken: db.prepare('UPDATE tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL'),
  };
  return {
    insertGrant(id: string, tenantId: string, clientId: string | null, at: number): void {
      q.insertGrant.run(id, tenantId, clientId, at);
    },
    revokeGrant(id: string, at: number, reason: string): void {
      q.revokeGrant.run(at, reason, id);
    },
    insertToken(hash: string, grantId: string, kind: 'access' | 'refresh', expiresAt: number | null, at: number): void {
      q.insertToken.run(hash, grantId, kind, expiresAt, at);
    },
    getToken: (hash: string) => q.getToken.get(hash) as TokenRow | undefined,
    useToken: (hash: string, at: number) => q.useToken.run(at, hash).changes === 1,
  };
}

/** Records pushed to a tenant, and edits made to its generated records. */
function recordStatements(db: Db) {
  const q = {
    insertRecord: db.prepare('INSERT INTO pushed_records (tenant_id, data_type, record_id, body) VALUES (?, ?, ?, ?)'),
    countRecords: db.prepare('SELECT count(*) AS n FROM pushed_records WHERE tenant_id = ? AND data_type = ?'),
    pageRecords: db.prepare('SELECT body FROM pushed_records WHERE tenant_id = ? AND data_type = ? ORDER BY seq LIMIT ? OFFSET ?'),
    recordExists: db.prepare('SELECT 1 FROM pushed_records WHERE tenant_id = ? AND data_type = ? AND record_id = ?'),
    recordBySeq: db.prepare('SELECT body FROM pushed_records WHERE seq = ?'),
    pushedRecord: db.prepare('SELECT body FROM pushed_records WHERE tenant_id = ? AND data_type = ? AND record_id = ? ORDER BY seq LIMIT 1'),
    getEdit: db.prepare('SELECT body FROM record_edits WHERE tenant_id = ? AND data_type = ? AND record_id = ?'),
    anyEdit: db.prepare('SELECT 1 FROM record_edits WHERE tenant_id = ? AND data_type = ? LIMIT 1'),
    putEdit: db.prepare(`INSERT INTO record_edits (tenant_id, data_type, record_id, body) VALUES (?, ?, ?, ?)
      ON CONFLICT (tenant_id, data_type, record_id) DO UPDATE SET body = excluded.body`),
  };
  return {
    insertRecord(tenantId: string, dataType: string, record: Record<string, unknown> & { id: string }): number {
      return Number(q.insertRecord.run(tenantId, dataType, record.id, JSON.stringify(record)).lastInsertRowid);
    },
    countRecords: (tenantId: string, dataType: string) => (q.countRecords.get(tenantId, dataType) as { n: number }).n,
    pageRecords: (tenantId: string, dataType: string, offset: number, limit: number) =>
      (q.pageRecords.all(tenantId, dataType, limit, offset) as Array<{ body: string }>).map((r) => JSON.parse(r.body) as Record<string, unknown>),
    recordExists: (tenantId: string, dataType: string, id: string) => q.recordExists.get(tenantId, dataType, id) !== undefined,
    recordBySeq(seq: number): Record<string, unknown> | undefined {
      const row = q.recordBySeq.get(seq) as { body: string } | undefined;
      return row && (JSON.parse(row.body) as Record<string, unknown>);
    },

    pushedRecord(tenantId: string, dataType: string, id: string): Record<string, unknown> | undefined {
      const row = q.pushedRecord.get(tenantId, dataType, id) as { body: string } | undefined;
      return row && (JSON.parse(row.body) as Record<string, unknown>);
    },
    getEdit(tenantId: string, dataType: string, id: string): Record<string, unknown> | undefined {
      const row = q.getEdit.get(tenantId, dataType, id) as { body: string } | undefined;
      return row && (JSON.parse(row.body) as Record<string, unknown>);
    },
    hasEdits: (tenantId: string, dataType: string) => q.anyEdit.get(tenantId, dataType) !== undefined,
    putEdit(tenantId: string, dataType: string, record: Record<string, unknown> & { id: string }): void {
      q.putEdit.run(tenantId, dataType, record.id, JSON.stringify(record));
    },
  };
}

/** Pushes (creates, updates, deletes) and how each completed. */
function pushStatements(db: Db) {
  const q = {
    insertPush: db.prepare(`INSERT INTO pushes (id, tenant_id, data_type, op, record_id, force, status, payload, requested, complete_at)
      VALUES (@id, @tenantId, @dataType, @op, @recordId, @force, 'Pending', @payload, @at, @completeAt)`),
    getPush: db.prepare('SELECT * FROM pushes WHERE id = ?'),
    duePushes: db.prepare(`SELECT * FROM pushes WHERE tenant_id = ? AND data_type = ? AND status = 'Pending' AND complete_at <= ?
      ORDER BY requested, rowid`),
    completePush: db.prepare(`UPDATE pushes SET status = ?, completed = ?, record_seq = ?, result = ?, errors = ?
      WHERE id = ? AND status = 'Pending'`),
  };
  return {
    insertPush(push: { id: string; tenantId: string; dataType: string; op: PushOp; recordId: string | null; force: boolean; payload: Record<string, unknown>; at: number; completeAt: number }): void {
      q.insertPush.run({ ...push, force: push.force ? 1 : 0, payload: JSON.stringify(push.payload) });
    },
    getPush(id: string): PushRow | undefined {
      const row = q.getPush.get(id) as RawPush | undefined;
      return row && pushOf(row);
    },
    duePushes: (tenantId: string, dataType: string, now: number) => (q.duePushes.all(tenantId, dataType, now) as RawPush[]).map(pushOf),
    completePush(id: string, status: 'Success' | 'Failed', at: number, outcome: { recordSeq?: number; result?: Record<string, unknown>; errors?: PushRow['errors'] }): void {
      q.completePush.run(status, at, outcome.recordSeq ?? null, outcome.result ? JSON.stringify(outcome.result) : null, outcome.errors ? JSON.stringify(outcome.errors) : null, id);
    },
  };
}
