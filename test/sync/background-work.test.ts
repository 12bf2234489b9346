// What the sync worker's thread leaves to the request thread and takes from it: a request
// thread busy with clients' requests makes each pass run one job (the gauge reads requests
// in flight, not the thread's other work); tokens that need no refresh are read without
// the refresh lease (no writes, no waiting on another holder); and the worker's thread
// checkpoints the WAL, so the request thread's commits never do.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service/app.js';
import Fastify from 'fastify';
import { InFlight, observeRequests } from '../../src/service/observability/requests.js';
import { busyTest, loadGauge, measureLoad, RequestTime } from '../../src/service/sync/request-load.js';
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
});

describe('the request thread\'s load gauge', () => {
  /** `n` readings of the gauge, each taken while `during` ran between looks. */
  async function readings(gauge: Int32Array, n: number, during: () => void = () => undefined): Promise<number[]> {
    const taken: number[] = [];
    while (taken.length < n) {
      Atomics.store(gauge, 0, -1);
      taken.push(await waitFor('a reading of the gauge', async () => {
        during();
        const reading = Atomics.load(gauge, 0);
        return reading === -1 ? undefined : reading;
      }));
    }
    return taken;
  }
  const isBusy = (reading: number) => busyTest(new Int32Array([reading]))();

  it('reads busy while a client request is in flight, and not for event streams, probes or other work on the thread', async () => {
    const requests = new RequestTime();
    const app = Fastify();
    observeRequests(app, new InFlight(), undefined, undefined, requests);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const arrived = new Set<string>();
    for (const route of ['/companies', '/events/stream', '/healthz']) {
      app.get(route, async () => {
        arrived.add(route);
        await held;
        return {};
      });
    }
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const gauge = loadGauge();
    const stop = measureLoad(gauge, requests);
    const calls: Array<Promise<unknown>> = [];
    try {
      const reads = async (n: number, during?: () => void) => (await readings(gauge, n, during)).map(isBusy);
      // The thread kept busy by work that answers no request (a CLI beside the API, say).
      const spin = () => {
        const until = performance.now() + 50;
        while (performance.now() < until);
      };
      expect(await reads(3, spin)).toEqual([false, false, false]);
      // An event stream and a probe, held open, are not clients waiting for an answer.
      calls.push(fetch(`${url}/events/stream`), fetch(`${url}/healthz`));
      await waitFor('the stream and the probe to arrive', async () => arrived.size === 2);
      expect(await reads(3)).toEqual([false, false, false]);
      calls.push(fetch(`${url}/companies`));
      await waitFor('a busy reading while a request is in flight', async () => (await reads(1))[0]);
      release();
      await Promise.all(calls);
      await waitFor('an idle reading once it was answered', async () => !(await reads(1))[0]);
    } finally {
      release();
      stop();
      await Promise.allSettled(calls);
      await app.close();
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
