// The event bus: on PostgreSQL it wakes on the database's notices of commits, from any
// process, and reads nothing for them (a look a second at most, for a notice that never
// came); a listening connection that is lost is opened again, and what was written while it
// was down wakes the listeners once it is back. On SQLite it looks for new events and wakes
// every listener when the newest one moved.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/service/events/bus.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import type { EventInput } from '../../src/service/store/events.js';
import { pgCommitNotices } from '../../src/service/store/pg/notices.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { openPostgres } from '../../src/service/store/pg/pool.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An account with a consumer of company.created, and a way to write its events (each with one delivery) or another account's (none). */
async function account(store: AsyncStore) {
  const client = await store.insertClient({ name: 'Bus Ltd', plan: 'Paid', created: '2026-01-01T00:00:00Z' });
  const quiet = await store.insertClient({ name: 'Quiet Ltd', plan: 'Paid', created: '2026-01-01T00:00:00Z' });
  await store.insertConsumer({
    id: randomUUID(), client_id: client.id, url: 'https://hooks.example.com/x', event_types: '["company.created"]', company_tags: null, company_id: null,
    rule_type: null, disabled: 0, disabled_reason: null, secret: Buffer.from('sealed'), created: '2026-01-01T00:00:00Z',
  });
  const write = (clientId: string) => {
    const id = randomUUID();
    const event: EventInput = { id, clientId, companyId: null, companyTags: [], eventType: 'company.created', generated: '2026-01-01T00:00:00Z', body: '{}' };
    return store.transaction((tx) => tx.insertEvent(event));
  };
  return { withDelivery: () => write(client.id), withoutDelivery: () => write(quiet.id) };
}

describePostgres('the event bus on PostgreSQL', () => {
  async function open() {
    const url = await freshDatabase();
    const writer = createPgStore(await openPostgres(url, { max: 2 }));
    const reader = createPgStore(await openPostgres(url, { max: 2 }));
    cleanups.push(async () => {
      await writer.close();
      await reader.close();
    });
    let looks = 0;
    // A safety look far beyond the test's deadlines: only a notice can wake the listeners in time.
    // Every notice wakes at once (no gap between wakes), so each can be counted.
    const bus = new EventBus({ latestEventSeq: () => (looks += 1, reader.latestEventSeq()) }, { notices: pgCommitNotices(url), safetyMs: 600_000, intervalMs: 0 });
    cleanups.push(() => bus.close());
    const woken = { events: 0, deliveries: 0 };
    bus.subscribe(() => (woken.events += 1));
    bus.deliveries.subscribe(() => (woken.deliveries += 1));
    const hearing = () => (bus as unknown as { hearing: boolean }).hearing;
    await waitFor('the bus to listen', async () => hearing());
    // Listening began: one wake of each, then quiet.
    await waitFor('the wakes of the start', async () => woken.events === 1 && woken.deliveries === 1);
    return { url, bus, writes: await account(writer), woken, looks: () => looks, hearing };
  }

  it('wakes on events and on deliveries committed by another process, each kind for its own, and reads nothing for them', async () => {
    const { writes, woken, looks } = await open();
    const before = looks();
    // An event no consumer wants writes no delivery: the deliveries listener sleeps on.
    await writes.withoutDelivery();
    await waitFor('the events listener', async () => woken.events === 2);
    await writes.withDelivery();
    await waitFor('both listeners', async () => woken.events === 3 && woken.deliveries >= 2);
    expect(woken.deliveries).toBe(2);
    for (let i = 0; i < 20; i++) await writes.withDelivery();
    await waitFor('a wake for each', async () => woken.events === 23 && woken.deliveries === 22);
    expect(looks()).toBe(before);
  });

  it('listens again after its connection is lost, and wakes the listeners for what was written meanwhile', async () => {
    const { url, writes, woken, hearing } = await open();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
    await waitFor('the bus to hear it lost', async () => !hearing());
    const before = { ...woken };
    await writes.withDelivery();
    await waitFor('the bus to listen again', async () => hearing(), 20_000);
    await waitFor('the listeners woken', async () => woken.events > before.events && woken.deliveries > before.deliveries);
    const back = { ...woken };
    await writes.withDelivery();
    await waitFor('a notice after it', async () => woken.events > back.events && woken.deliveries > back.deliveries);
  });
});

describe('the event bus on SQLite', () => {
  it('looks for events written on another connection and wakes every listener when the newest moved', async () => {
    const dir = tempDir('ferry-bus-');
    const file = join(dir, 'ferry.db');
    const [writer, reader] = [sqliteAsyncStore(openDatabase(file)), sqliteAsyncStore(openDatabase(file))];
    cleanups.push(async () => {
      await writer.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const bus = new EventBus(reader);
    cleanups.push(() => bus.close());
    const woken = { events: 0, deliveries: 0 };
    bus.subscribe(() => (woken.events += 1));
    bus.deliveries.subscribe(() => (woken.deliveries += 1));
    const writes = await account(writer);
    await writes.withoutDelivery();
    await waitFor('both listeners', async () => woken.events >= 1 && woken.deliveries >= 1);
  });
});
