// What the sync worker's thread leaves to the request thread and takes from it: a busy
// request thread makes each pass run one pull; tokens that need no refresh are read without
// the refresh lease (no writes, no waiting on another holder); and the worker's thread
// checkpoints the WAL, so the request thread's commits never do.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service/app.js';
import { busyTest, loadGauge, measureLoad } from '../../src/service/sync/request-load.js';
import { freshTokens, readTokens } from '../../src/service/tokens.js';
import { anotherStore } from '../helpers/at-rest.js';
import { tempDir } from '../helpers/service.js';
import { linkedCompany, waitFor } from '../helpers/sync.js';
import { type Harness, startTestStack, testStore } from '../helpers/stack.js';
import { integrationByKey } from '../../src/platforms/registry.js';

describe('the sync worker beside the request thread', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('runs one job (a company\'s sync) a pass while the request thread is busy, and its full concurrency otherwise', async () => {
    for (let i = 0; i < 3; i++) {
      const linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 3);
      expect((await h.api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
    }
    const types = integrationByKey('gbol')!.dataTypes.length;
    const busy = await h.sync({ busy: () => true });
    expect(busy).toMatchObject({ pulls: types, yielded: true });
    const idle = await h.sync({ busy: () => false, concurrency: 4 });
    expect(idle).toMatchObject({ pulls: 2 * types, yielded: false });
    await h.drain();
  });

  it('reads tokens that need no refresh without waiting for the refresh lease another connection holds', async () => {
    const linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 1);
    const { store, sealer, platform } = h.service.context;
    const other = await anotherStore(h);
    const now = Date.now();
    try {
      expect(await other.takeRefreshLease(linked.connectionId, now, now + 10 * 60_000)).toBe(true);
      const connection = (await store.getConnectionById(linked.connectionId))!;
      const tokens = await freshTokens(store, sealer, platform!, connection, () => h.clock.now().toISOString());
      expect(tokens).toEqual(await readTokens(store, sealer, linked.connectionId));
      // The lease is still the other connection's: this read neither took nor freed it.
      expect(await store.takeRefreshLease(linked.connectionId, Date.now(), Date.now() + 1000)).toBe(false);
    } finally {
      await other.releaseRefreshLease(linked.connectionId, now + 10 * 60_000);
      await other.close();
    }
  });

  it('tells a busy request thread from an idle one', async () => {
    const gauge = loadGauge();
    const stop = measureLoad(gauge);
    try {
      const busy = busyTest(gauge);
      await waitFor('an idle reading', async () => !busy());
      // Synchronous work on this thread, a little at a time, until the gauge says busy.
      await waitFor('a busy reading', async () => {
        const until = performance.now() + 50;
        while (performance.now() < until);
        return busy();
      });
    } finally {
      stop();
    }
  });
});

// SQLite's write-ahead log; PostgreSQL checkpoints on its server.
describe.skipIf(testStore === 'postgres')('WAL checkpoints with the sync worker running', () => {
  it('the worker thread copies the request thread\'s commits into the database file', async () => {
    const dataDir = tempDir('ferry-checkpoint-');
    // No pull is ever queued, so the platform is never called.
    const service = await createService({ dataDir, rateLimit: 0, platformUrl: 'http://127.0.0.1:9', startWebhooks: false });
    try {
      expect(service.db!.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      const file = join(dataDir, 'ferry.db');
      const before = statSync(file).size;
      const client = (await service.store.findAdminClient())!;
      // A few hundred pages: the WAL alone holds them until a checkpoint copies them over.
      for (let i = 0; i < 200; i++) await service.store.insertCompany(client.id, { name: `Checkpoint ${i}`, description: 'x'.repeat(2000), tags: {} }, '2026-11-25T10:00:00Z');
      await waitFor('the database file to take the new pages', async () => statSync(file).size > before);
    } finally {
      await service.close();
    }
  });
});
