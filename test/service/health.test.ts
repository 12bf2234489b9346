// /healthz and /readyz as a load balancer sees them: no key, no rate limit, no data in the
// answer; ready when the store answers with every migration applied and the background
// work runs, and 503 with the reasons when not (a migration missing, maintenance mode, the
// sync thread gone).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground } from '../../src/service/background.js';
import { EventBus } from '../../src/service/events/bus.js';
import { createSealer } from '../../src/service/secrets.js';
import { listMigrations } from '../../src/service/store/sqlite/db.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { getJson } from '../helpers/observability.js';

describe('the probes', () => {
  let t: TestService;

  beforeAll(async () => {
    // A rate limit of 1 a second: probes are not counted against anyone.
    t = await startTestStack('service', { rateLimit: 1 });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answer without a key, past the rate limit, with nothing of the data', async () => {
    for (let i = 0; i < 5; i++) {
      const live = await getJson(`${t.baseUrl}/healthz`);
      expect(live).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(live.headers['x-correlation-id']).toBeTruthy();
      expect(live.headers['x-rate-limit-limit']).toBeUndefined();
      const ready = await getJson(`${t.baseUrl}/readyz`);
      expect(ready).toEqual(expect.objectContaining({ status: 200, body: { status: 'ready' } }));
      expect(ready.headers['cache-control']).toBe('no-store');
    }
    // The API itself still wants a key.
    expect((await getJson(`${t.baseUrl}/companies`)).status).toBe(401);
  });

  it('say not ready in maintenance mode, while still alive', async () => {
    t.service.setMaintenance(true);
    try {
      expect(await getJson(`${t.baseUrl}/readyz`)).toMatchObject({ status: 503, body: { status: 'not ready', reasons: ['maintenance mode: every request answers 503'] } });
      expect((await getJson(`${t.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      t.service.setMaintenance(false);
    }
    expect((await getJson(`${t.baseUrl}/readyz`)).status).toBe(200);
  });

  it('say not ready while the database lacks a migration of this build, naming it', async () => {
    const undo = await forgetLastMigration(t);
    try {
      expect(await getJson(`${t.baseUrl}/readyz`)).toMatchObject({
        status: 503, body: { status: 'not ready', reasons: [`the database lacks migrations of this build: ${LAST_MIGRATION.name}`] },
      });
    } finally {
      await undo();
    }
    expect((await getJson(`${t.baseUrl}/readyz`)).status).toBe(200);
  });
});

/** The build's last migration, and the one before it (the same number and name on both stores). */
const BEFORE_LAST = listMigrations().at(-2)!;
const LAST_MIGRATION = listMigrations().at(-1)!;

/** As a database restored from an older build: its last migration not recorded. Returns the undoing. */
async function forgetLastMigration(t: TestService): Promise<() => Promise<void>> {
  const { db } = t.service;
  if (db) {
    const version = db.pragma('user_version', { simple: true }) as number;
    db.pragma(`user_version = ${BEFORE_LAST.version}`);
    return async () => void db.pragma(`user_version = ${version}`);
  }
  const pool = new Pool({ connectionString: t.database, max: 1 });
  const { rows: [gone] } = await pool.query('DELETE FROM schema_migrations WHERE name = $1 RETURNING version, name, applied', [LAST_MIGRATION.name]);
  return async () => {
    await pool.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)', [gone.version, gone.name, gone.applied]);
    await pool.end();
  };
}

describe('the background work\'s health', () => {
  it('names the sync threads that ended, and the loops of a stopping process not at all', async () => {
    const t = await startTestStack('service');
    const dir = tempDir('ferry-health-');
    // A database file the thread cannot open: it ends at its start, as a thread that crashed.
    const notADir = join(dir, 'file');
    writeFileSync(notADir, '');
    const errors: string[] = [];
    const background = startBackground({
      opened: { kind: 'sqlite', dbFile: join(notADir, 'ferry.db'), db: t.service.db!, store: t.service.store, adminKey: '' },
      secretKey: Buffer.alloc(32, 1), sealer: createSealer(Buffer.alloc(32, 1)), clock: t.service.context.clock,
      events: new EventBus(t.service.store), platformUrl: 'http://127.0.0.1:9', sync: true, webhooks: true,
      onError: (err) => errors.push(String(err)),
    });
    try {
      // The first thread alone until there is sync work: named as the one thread.
      const first = await waitFor('the thread to be found gone', async () => {
        const found = await background.health();
        // A loaded machine may first see the thread slow to answer at its start: wait for its end.
        return found.includes('the sync worker thread has stopped') && found;
      });
      expect(first).toEqual(['the sync worker thread has stopped']);
      expect(background.syncThreads()).toBe(0);
      // Work queued starts the second: SQLite's two threads (background.ts), counted in one reason.
      background.wakeSync();
      const reasons = await waitFor('both threads to be found gone', async () => {
        const found = await background.health();
        return found.includes('2 of 2 sync worker threads have stopped') && found;
      });
      expect(reasons).toEqual(['2 of 2 sync worker threads have stopped']);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await background.stop();
      await t.stop();
    }
    expect(await background.health()).toEqual([]);
  });
});
