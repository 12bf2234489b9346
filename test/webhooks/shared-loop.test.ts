// The delivery loop when it is one of several on a database (instances on PostgreSQL) and
// when it is the only one. A delivery leased by another loop stands in for the other
// instance: a shared loop leaves that lease alone at start and at stop, freeing only what
// it claimed itself; an exclusive loop frees every lease when it starts (a killed process
// left them), as the embedded service always has. On SQLite (two connections to one file)
// and on PostgreSQL (two pools).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isoSeconds, systemClock } from '../../src/lib/clock.js';
import { createSealer } from '../../src/service/secrets.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { deliveryIdOf } from '../../src/service/store/events.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { openPostgres } from '../../src/service/store/pg/pool.js';
import { newConsumerSecret } from '../../src/service/webhooks/sign.js';
import { DeliveryLoop } from '../../src/service/webhooks/loop.js';
import { TargetPolicy } from '../../src/service/webhooks/target-policy.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from './support.js';

const sealer = createSealer(randomBytes(32));
const noWakes = { subscribe: () => () => undefined };
/** The deliveries of the events e1 and e2 to the consumer k. */
const [d1, d2] = [deliveryIdOf('e1', 'k'), deliveryIdOf('e2', 'k')];

interface Opened {
  /** The loop's store, and the other instance's. */
  store: AsyncStore;
  other: AsyncStore;
  leaseOf(deliveryId: string): Promise<string | null>;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const dir = tempDir('ferry-shared-loop-');
  const file = join(dir, 'ferry.db');
  const [store, other] = [sqliteAsyncStore(openDatabase(file)), sqliteAsyncStore(openDatabase(file))];
  const reader = openDatabase(file);
  return {
    store,
    other,
    leaseOf: async (id) => (reader.prepare('SELECT lease_until FROM webhook_deliveries WHERE id = ?').get(id) as { lease_until: string | null }).lease_until,
    async close() {
      reader.close();
      await store.close();
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPg(): Promise<Opened> {
  const url = await freshDatabase();
  const pool = await openPostgres(url, { max: 4 });
  const [store, other] = [createPgStore(pool), createPgStore(await openPostgres(url, { max: 4 }))];
  return {
    store,
    other,
    leaseOf: async (id) => (await pool.query<{ lease_until: string | null }>('SELECT lease_until FROM webhook_deliveries WHERE id = $1', [id])).rows[0]!.lease_until,
    async close() {
      await store.close();
      await other.close();
    },
  };
}

function scenarios(name: string, open: () => Promise<Opened>): void {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A consumer on a receiver that never answers, with a delivery of two companies' events
   * due (d1, d2, separate lanes); the other instance has leased d1 for an hour.
   */
  async function setup(): Promise<{ opened: Opened; receiver: Receiver; otherLease: string }> {
    const opened = await open();
    cleanups.push(() => opened.close());
    const receiver = await startReceiver({ kind: 'hang' });
    cleanups.push(() => receiver.close());
    const { other } = opened;
    const now = Date.now();
    const at = (seconds: number) => isoSeconds(new Date(now + seconds * 1000));
    const client = await other.insertClient({ name: 'Shared Ltd', plan: 'Paid', created: at(-60) });
    await other.insertConsumer({
      id: 'k', client_id: client.id, url: receiver.url, event_types: '["company.created"]', company_tags: null, company_id: null, rule_type: null, disabled: 0, disabled_reason: null,
      secret: sealer.seal(newConsumerSecret(), 'k'), created: at(-60),
    });
    for (const [i, company] of ['co1', 'co2'].entries()) {
      await other.insertEvent({
        id: `e${i + 1}`, clientId: client.id, companyId: company, companyTags: [], eventType: 'company.created', generated: at(-10 + i),
        body: JSON.stringify({ id: `e${i + 1}`, eventType: 'company.created', generatedDate: at(-10 + i), payload: {} }),
      });
    }
    const otherLease = at(3600);
    const claimed = await other.transaction((tx) => tx.claimDeliveries({ now: at(0), leaseUntil: otherLease, limit: 1, perConsumer: 8, busy: {} }));
    expect(claimed.claimed.map((d) => d.id)).toEqual([d1]);
    return { opened, receiver, otherLease };
  }

  const loop = (store: AsyncStore, shared: boolean) => {
    // The receiver listens on 127.0.0.1: the operator's opt-in.
    const made = new DeliveryLoop({ store, clock: systemClock, sealer, shared, targets: new TargetPolicy({ allowPrivate: true }) }, noWakes);
    made.start();
    return made;
  };

  it(`${name}: a shared loop leaves another loop's lease alone at start and at stop, and frees its own`, async () => {
    const { opened, receiver, otherLease } = await setup();
    const shared = loop(opened.store, true);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await shared.stop();
    });
    await waitFor('its attempt of d2', async () => receiver.requests >= 1);
    // The first pass came after any release at start: d1 is still the other loop's.
    expect(await opened.leaseOf(d1)).toBe(otherLease);
    expect(await opened.leaseOf(d2)).not.toBeNull();
    stopped = true;
    await shared.stop();
    expect(await opened.leaseOf(d2)).toBeNull();
    expect(await opened.leaseOf(d1)).toBe(otherLease);
    expect(receiver.requests).toBe(1);
  });

  it(`${name}: an exclusive loop frees every lease when it starts, and at stop`, async () => {
    const { opened, receiver } = await setup();
    const exclusive = loop(opened.store, false);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await exclusive.stop();
    });
    await waitFor('its attempts of d1 and d2', async () => receiver.requests >= 2);
    stopped = true;
    await exclusive.stop();
    expect([await opened.leaseOf(d1), await opened.leaseOf(d2)]).toEqual([null, null]);
  });
}

// The 'postgres' project of vitest.config.ts runs this file again: each half runs once.
const onPostgres = process.env.FERRY_TEST_STORE === 'postgres';

if (!onPostgres) describe('delivery loops sharing a SQLite database', () => scenarios('SQLite', openSqlite));
if (onPostgres) describePostgres('delivery loops sharing a PostgreSQL database', () => scenarios('PostgreSQL', openPg));
