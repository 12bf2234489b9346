// Read, check, then write, with several workers and API instances on one database. Each
// scenario runs the service's own code (not the store alone) on SQLite, where every
// transaction is alone, and on PostgreSQL with two pools standing in for two processes,
// whose transactions run side by side under READ COMMITTED: both must give the answer
// SQLite gives. Without the locks and conditional writes these check, PostgreSQL's answers
// differ: a read.completed lost, a data set queued twice, a push's event recorded twice…
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { isoSeconds } from '../../../src/lib/clock.js';
import { FERRY_EVENTS } from '../../../src/service/events/catalogue.js';
import type { PlatformAdapter, PushOutcome } from '../../../src/service/adapters/adapter.js';
import { createSealer } from '../../../src/service/secrets.js';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { CompanyRow } from '../../../src/service/store/companies.js';
import type { ConnectionRow } from '../../../src/service/store/connections.js';
import { createPgStore } from '../../../src/service/store/pg/pg-store.js';
import type { PullRow } from '../../../src/service/store/pulls.js';
import { queueAll, queuePull } from '../../../src/service/sync/enqueue.js';
import { pullsEnded } from '../../../src/service/sync/events.js';
import { pollPendingPushes } from '../../../src/service/sync/push-poll.js';
import { queueScheduledSyncs } from '../../../src/service/sync/schedule.js';
import { withRefreshLease } from '../../../src/service/tokens.js';
import { describePostgres } from '../../helpers/postgres.js';
import { FakeClock, waitFor } from '../../helpers/sync.js';
import { secondPool } from './owners.js';
import { freshPostgres, freshSqlite } from './stores.js';

const T0 = '2026-01-01T00:00:00Z';
const HOUR = 3_600;
const sealer = createSealer(randomBytes(32));

type Pair = [AsyncStore, AsyncStore];

const pools: Array<{ end(): Promise<void> }> = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

/**
 * The scenario on SQLite (one store for both sides: its transactions take turns anyway)
 * and on PostgreSQL (two stores over two pools on one schema: two processes).
 */
async function racing<T>(scenario: (stores: Pair, clock: FakeClock) => Promise<T>): Promise<{ sqlite: T; postgres: T }> {
  const alone = freshSqlite();
  const sqlite = await scenario([alone, alone], new FakeClock(Date.parse(T0)));
  const pool = await freshPostgres();
  const other = secondPool(pool);
  pools.push(other, pool);
  return { sqlite, postgres: await scenario([createPgStore(pool), createPgStore(other)], new FakeClock(Date.parse(T0))) };
}

/** A turn of the event loop, inside a transaction: the other process's work goes on meanwhile. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A company with a Linked connection holding tokens. */
async function linkedCompany(store: AsyncStore, name: string): Promise<{ company: CompanyRow; connection: ConnectionRow }> {
  const client = await store.insertClient({ name: `${name} Ltd`, plan: 'Paid', created: T0 });
  const company = await store.insertCompany(client.id, { name, tags: {} }, T0);
  const made = await store.insertConnection(company.id, 'gbol', 'xero', T0);
  await store.markLinked(made.id, null);
  await store.storeTokens(made.id, sealer.seal({ accessToken: 'access-0', refreshToken: 'refresh-0' }, made.id), T0);
  return { company, connection: (await store.getConnectionById(made.id))! };
}

const eventCount = async (store: AsyncStore, companyId: string, eventType: string) => (await store.companyEventsAfter(companyId, eventType, 0)).length;

describePostgres('races between processes on one database', () => {
  it('records read.completed once when the last two pulls of a company end at once in two processes', async () => {
    const { sqlite, postgres } = await racing(async ([a, b], clock) => {
      const companies: Array<{ company: CompanyRow; pulls: PullRow[] }> = [];
      for (let i = 0; i < 8; i++) {
        const { company, connection } = await linkedCompany(a, `Company ${i}`);
        companies.push({ company, pulls: [await queuePull(a, clock, connection, 'invoices'), await queuePull(a, clock, connection, 'customers')] });
      }
      // As run-pull.ts ends a pull: its company (locked), its final state, then its events, in one transaction.
      const end = (store: AsyncStore, pull: PullRow) => store.transaction(async (tx) => {
        const company = (await tx.getCompany(pull.company_id))!;
        await tx.updatePull(pull.id, { status: 'Complete', completed: isoSeconds(clock.now()), progress: 100, lease_until: null });
        const ended = (await tx.getPull(pull.id))!;
        await turn();
        await pullsEnded({ store, clock }, [{ pull: ended, company, records: null }]);
      });
      await Promise.all(companies.flatMap(({ pulls: [invoices, customers] }) => [end(a, invoices!), end(b, customers!)]));
      return Promise.all(companies.map(async ({ company }) => {
        const [completed] = await a.companyEventsAfter(company.id, 'read.completed', 0);
        return {
          readCompleted: await eventCount(a, company.id, 'read.completed'),
          initial: await eventCount(a, company.id, 'read.completed.initial'),
          dataTypes: completed && (JSON.parse(completed.body) as { payload: { dataTypes: Array<{ dataType: string }> } }).payload.dataTypes.map((d) => d.dataType),
          perDataType: await eventCount(a, company.id, FERRY_EVENTS.dataTypeReadCompleted),
        };
      }));
    });
    expect(postgres).toEqual(sqlite);
    expect(new Set(sqlite.map((answer) => JSON.stringify(answer)))).toEqual(new Set([JSON.stringify({ readCompleted: 1, initial: 1, dataTypes: ['customers', 'invoices'], perDataType: 2 })]));
  });

  it('queues one pull per data set when two processes queue it at once (one data type, or all)', async () => {
    const { sqlite, postgres } = await racing(async ([a, b], clock) => {
      const answers = [];
      for (let i = 0; i < 6; i++) {
        const { company, connection } = await linkedCompany(a, `Company ${i}`);
        const [one, two, all, everything] = await Promise.all([
          queuePull(a, clock, connection, 'invoices'), queuePull(b, clock, connection, 'invoices'), queueAll(a, clock, [connection]), queueAll(b, clock, [connection]),
        ]);
        const invoices = new Set([one!.id, two!.id, ...[...all!, ...everything!].filter((p) => p.data_type === 'invoices').map((p) => p.id)]);
        const open = await a.openPulls(company.id);
        answers.push({
          invoicePulls: invoices.size,
          sameAll: JSON.stringify(all!.map((p) => p.id)) === JSON.stringify(everything!.map((p) => p.id)),
          queued: (await a.runPage(a.pullsPage(company.id, { page: 1, pageSize: 1 }))).total === open.size,
        });
      }
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual(Array.from({ length: 6 }, () => ({ invoicePulls: 1, sameAll: true, queued: true })));
  });

  it('queues a scheduled sync once when another worker\'s check queued it (and its pull ended) since this one read the candidates', async () => {
    const { sqlite, postgres } = await racing(async ([a, b], clock) => {
      const { company, connection } = await linkedCompany(a, 'Scheduled');
      const first = await queuePull(a, clock, connection, 'invoices');
      await a.updatePull(first.id, { status: 'Complete', completed: T0, progress: 100 });
      clock.advance(25 * HOUR);
      // Worker b reads the due data sets, then is slow to act on them.
      let readOn!: () => void;
      const aDone = new Promise<void>((resolve) => (readOn = resolve));
      const lagging: AsyncStore = { ...b, scheduleCandidates: async (requestedBefore) => {
        const candidates = await b.scheduleCandidates(requestedBefore);
        await aDone;
        return candidates;
      } };
      const slow = queueScheduledSyncs(lagging, clock);
      const byA = await queueScheduledSyncs(a, clock);
      const second = (await a.openPull(company.id, 'invoices'))!;
      await a.updatePull(second.id, { status: 'Complete', completed: isoSeconds(clock.now()), progress: 100 });
      readOn();
      return { byA, byB: await slow, pulls: (await a.runPage(a.pullsPage(company.id, { page: 1, pageSize: 1 }))).total };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({ byA: 1, byB: 0, pulls: 2 });
  });

  it('records a pending push\'s outcome once when two workers poll it at once', async () => {
    const { sqlite, postgres } = await racing(async ([a, b], clock) => {
      const { company, connection } = await linkedCompany(a, 'Pushing');
      await a.insertPush({
        key: 'push-1', company_id: company.id, connection_id: connection.id, data_type: 'invoices', status: 'Pending', status_code: 202,
        requested: T0, completed: null, timeout_minutes: 60, error_message: null, validation: '{"errors":[],"warnings":[]}', changes: null,
        platform_push_id: 'pp-1', change_type: 'Created', record_id: null,
      });
      clock.advance(60);
      // The platform answers each worker once both have asked: both saw the push pending.
      let asked = 0;
      let answer!: () => void;
      const both = new Promise<void>((resolve) => (answer = resolve));
      const adapter = {
        needsRefresh: () => false,
        pushStatus: async (): Promise<PushOutcome> => {
          if (++asked === 2) answer();
          await both;
          return { status: 'Success', record: { id: 'inv-1' } };
        },
      } as unknown as PlatformAdapter;
      const settled = await Promise.all([a, b].map((store) => pollPendingPushes({ store, clock, sealer, adapter })));
      return { settled: settled.reduce((x, y) => x + y), events: await eventCount(a, company.id, 'invoices.write.successful'), status: (await a.getPush('push-1'))!.status };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({ settled: 1, events: 1, status: 'Success' });
  });

  it('keeps a refresh lease while a refresh outlasts it, and frees only its own', async () => {
    const { sqlite, postgres } = await racing(async ([a, b]) => {
      const { connection } = await linkedCompany(a, 'Refreshing');
      const leaseOf = async () => ((await a.getConnectionById(connection.id)) as { refresh_lock_until?: number | null }).refresh_lock_until ?? null;
      const answers: unknown[] = [];
      // A refresh slower than its 600 ms lease: renewed while it runs, so no other holder gets in.
      await withRefreshLease(a, connection.id, async () => {
        const taken = (await leaseOf())!;
        await waitFor('a renewal', async () => ((await leaseOf()) ?? 0) > taken, 10_000, 20);
        answers.push(await b.takeRefreshLease(connection.id, taken + 1, taken + 1_000));
      }, 600);
      answers.push(await leaseOf());
      // A holder paused past its lease: another took it meanwhile, and keeps it when the first ends.
      const later = Date.now() + 10 * 60_000;
      await withRefreshLease(a, connection.id, async () => {
        answers.push(await b.takeRefreshLease(connection.id, later, later + 30_000));
      });
      answers.push((await leaseOf()) === later + 30_000);
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([false, null, true, true]);
  });
});
