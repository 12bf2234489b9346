// The webhook outbox contract: claims, attempts, parking, replays and the delivery log
// answer the same on SQLite and on PostgreSQL (pg/deliveries.ts, pg/delivery-claims.ts).
// Lanes: a consumer's deliveries of one company go one at a time, oldest first. And on
// PostgreSQL alone: claimers in separate pools (as separate processes) racing each other
// and the attempts being recorded never lease one delivery twice, nor two of one lane.
import { Pool } from 'pg';
import { expect, it } from 'vitest';
import type { ClaimRequest } from '../../../src/service/store/delivery-turns.js';
import type { ClaimResult } from '../../../src/service/store/webhook-deliveries.js';
import { ROW_TYPES } from '../../../src/service/store/pg/pool.js';
import { databaseUrl, describePostgres } from '../../helpers/postgres.js';
import { consumer, deliveryNames, event, named, newClient, outboxMethods, refused, type OutboxStore } from './outbox.js';
import { freshPostgres, onBoth } from './stores.js';

const T0 = '2026-02-01T00:00:00Z';
const T1 = '2026-02-01T00:01:00Z';
const T2 = '2026-02-01T00:02:00Z';
const LEASE = '2026-02-01T01:00:00Z';

const claim = (fields: Partial<ClaimRequest> = {}): ClaimRequest => ({ now: T0, leaseUntil: LEASE, limit: 10, perConsumer: 10, busy: {}, ...fields });
/** The claimed deliveries' ids, in order, and whether more may be due. */
const ids = (result: ClaimResult) => ({ claimed: result.claimed.map((d) => d.id), more: result.more });
const attempt = (at: string, statusCode: number | null = 200) => ({ at, status_code: statusCode, error: statusCode === null ? 'timed out' : null, latency_ms: 12 });
const delivered = { status: 'Delivered', completed: T0 } as const;

/**
 * Consumers (`k` unless told) of one account, and events e1… of the companies given (null:
 * the account's own), one delivery each per consumer, named d1, d2, … in the order written.
 */
async function outbox(store: OutboxStore, companies: Array<string | null>, consumers = ['k']): Promise<{ client: string; d: Record<string, string> }> {
  const client = await newClient(store);
  for (const id of consumers) await store.insertConsumer(consumer(id, client));
  for (const [i, company] of companies.entries()) await store.insertEvent(event(`e${i + 1}`, client, company, { generated: T0 }));
  return { client, d: deliveryNames(companies.map((_, i) => [`e${i + 1}`, consumers])) };
}

/** Two pools on one fresh schema, as two processes would have. End both. */
async function twoPools(): Promise<[Pool, Pool]> {
  const first = await freshPostgres();
  const { rows: [where] } = await first.query<{ db: string; path: string }>("SELECT current_database() AS db, current_setting('search_path') AS path");
  return [first, new Pool({ connectionString: databaseUrl(where!.db), max: 4, types: ROW_TYPES, options: `-c search_path=${where!.path}` })];
}

/** Whether some session of this database waits for a lock. */
async function waitingForLocks(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM pg_locks
    WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
  return rows[0]!.n > 0;
}

async function until(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describePostgres('webhook deliveries contract', () => {
  it('claims lane heads only: the next of a company waits until the one before is settled; companies go in parallel', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const { client, d } = await outbox(store, ['co1', 'co1', 'co2', null, null, 'co1']);
      const steps: Record<string, unknown> = {};
      steps.idle = { due: await store.deliveriesDue(T0), next: await store.nextDeliveryDue(T0) };
      const first = await store.claimDeliveries(claim());
      steps.first = first;
      steps.again = ids(await store.claimDeliveries(claim()));
      steps.parked = { due: await store.deliveriesDue(T0), log: await store.getDelivery('k', d.d2!) };
      // d1 delivered: its lane's next (d2) is due.
      steps.recorded = await store.recordDeliveryAttempt(first.claimed[0]!.seq, attempt(T0), delivered);
      steps.afterFirst = ids(await store.claimDeliveries(claim()));
      // d4 fails for now: it stays its lane's head, retried at T1; d5 waits behind it.
      await store.recordDeliveryAttempt(4, attempt(T0, null), { status: 'Pending', nextAttempt: T1, firstFailure: T0 });
      steps.retrying = { due: await store.deliveriesDue(T0), next: await store.nextDeliveryDue(T0), early: ids(await store.claimDeliveries(claim())) };
      steps.retried = await store.claimDeliveries(claim({ now: T1 }));
      await store.recordDeliveryAttempt(4, attempt(T1, 500), { status: 'Pending', nextAttempt: T2, firstFailure: T1 });
      await store.recordDeliveryAttempt(4, attempt(T2, 503), { status: 'Failed', completed: T2 });
      // Given up on: the lane moves on.
      steps.afterFailed = ids(await store.claimDeliveries(claim({ now: T2 })));
      steps.attempts = await store.deliveryAttempts(4);
      steps.noAttempts = await store.deliveryAttempts(99);
      steps.gone = await store.recordDeliveryAttempt(99, attempt(T2), delivered);
      steps.log = (await store.runPage(store.webhookDeliveriesPage('k', { page: 1, pageSize: 10 }))).rows;
      return named(steps, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(ids(sqlite.first as ClaimResult).claimed).toEqual(['d1', 'd3', 'd4']);
    expect(sqlite.afterFirst).toEqual({ claimed: ['d2'], more: false });
    expect(sqlite.afterFailed).toEqual({ claimed: ['d5'], more: false });
  });

  it('holds a consumer at its attempts in flight: heads parked busy until a slot frees, or the loop says none is in flight', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const { client, d } = await outbox(store, ['co1', 'co2', 'co3', 'co4', 'co5'], ['k']);
      const steps: Record<string, unknown> = {};
      steps.first = ids(await store.claimDeliveries(claim({ perConsumer: 2, busy: { k: 1 } })));
      steps.parked = { due: await store.deliveriesDue(T0), next: await store.nextDeliveryDue(T0), d3: await store.getDelivery('k', d.d3!) };
      // d1 settled: one parked head (the oldest) is due again.
      await store.recordDeliveryAttempt(1, attempt(T0), delivered);
      steps.slotFreed = ids(await store.claimDeliveries(claim({ perConsumer: 2, busy: { k: 1 } })));
      // A lease cut off by a stop: due again, and a parked head with it.
      await store.releaseDeliveryLease(2);
      await store.releaseDeliveryLease(99);
      steps.released = ids(await store.claimDeliveries(claim({ perConsumer: 1 })));
      // Still in flight: nothing moves; idle: every busy head is due again.
      await store.unparkIdle({ consumers: ['k'], accounts: [] });
      steps.stillBusy = await store.deliveriesDue(T0);
      await store.unparkIdle({ consumers: ['someone-else'], accounts: [] });
      steps.idle = ids(await store.claimDeliveries(claim({ perConsumer: 5 })));
      // Every lease let go: all due again.
      await store.releaseDeliveryLeases();
      steps.all = ids(await store.claimDeliveries(claim()));
      return named(steps, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.first).toEqual({ claimed: ['d1'], more: false });
  });

  it('takes accounts in turn, each up to its share of the slots; what waits for its account is freed two at a time as its attempts settle', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      // Account A's consumers a1, a2, a3 have two older events each (d1…d6); account B's b1 one newer (d7).
      const a = await newClient(store, 'A');
      const b = await newClient(store, 'B');
      for (const id of ['a1', 'a2', 'a3']) await store.insertConsumer(consumer(id, a));
      await store.insertConsumer(consumer('b1', b));
      await store.insertEvent(event('e1', a, 'co1', { generated: T0 }));
      await store.insertEvent(event('e2', a, 'co2', { generated: T0 }));
      await store.insertEvent(event('e3', b, 'co3', { generated: T0 }));
      const d = deliveryNames([['e1', ['a1', 'a2', 'a3']], ['e2', ['a1', 'a2', 'a3']], ['e3', ['b1']]]);
      const steps: Record<string, unknown> = {};
      // Two accounts with work and 12 slots: a share of min(2, 12 / 3) each.
      const shared = (busy: Record<string, number>) => ({ cap: 2, slots: 12, busy });
      steps.first = ids(await store.claimDeliveries(claim({ perConsumer: 1, accounts: shared({}) })));
      steps.full = { due: await store.deliveriesDue(T0), d3: await store.getDelivery('a3', d.d3!) };
      // d1 settled: two of A's waiting heads (the oldest) are due; A takes one, the other waits again.
      await store.recordDeliveryAttempt(1, attempt(T0), delivered);
      steps.settled = ids(await store.claimDeliveries(claim({ perConsumer: 1, busy: { a2: 1, b1: 1 }, accounts: shared({ [a]: 1, [b]: 1 }) })));
      // The safety net frees what waits for an account with nothing in flight, and only that.
      await store.unparkIdle({ consumers: [], accounts: [a] });
      steps.busyAccount = await store.deliveriesDue(T0);
      await store.unparkIdle({ consumers: [], accounts: [b] });
      steps.idleAccount = ids(await store.claimDeliveries(claim({ accounts: { cap: 10, slots: 100, busy: {} } })));
      return named(steps, { A: a, B: b, ...d });
    });
    expect(postgres).toEqual(sqlite);
    // B's delivery, the newest, goes second: accounts take turns, not the oldest first.
    expect(sqlite.first).toEqual({ claimed: ['d1', 'd7', 'd2'], more: false });
    expect(sqlite.full).toMatchObject({ due: false, d3: { status: 'Pending', next_attempt: null } });
    expect(sqlite.settled).toEqual({ claimed: ['d3'], more: false });
    expect(sqlite.busyAccount).toBe(false);
    expect(sqlite.idleAccount).toEqual({ claimed: ['d4', 'd5', 'd6'], more: false });
  });

  it('parks the heads of a consumer whose breaker is open until its trial time, then lets one attempt through at a time', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      // k's deliveries d1, d3, d5 and j's d2, d4, d6, one lane each.
      const { client, d } = await outbox(store, ['co1', 'co2', 'co3'], ['k', 'j']);
      const steps: Record<string, unknown> = {};
      steps.paused = ids(await store.claimDeliveries(claim({ paused: { k: T1 } })));
      steps.waiting = { due: await store.deliveriesDue(T0), next: await store.nextDeliveryDue(T0), d1: await store.getDelivery('k', d.d1!) };
      steps.trial = ids(await store.claimDeliveries(claim({ now: T1, trials: ['k'] })));
      steps.onTrial = ids(await store.claimDeliveries(claim({ now: T1, trials: ['k'], busy: { k: 1 } })));
      // The trial failed (the breaker opens again, later): its lane waits for its retry; the
      // heads parked behind the trial are due again, and the claim parks them until the new time.
      await store.recordDeliveryAttempt(1, attempt(T1, null), { status: 'Pending', nextAttempt: T2, firstFailure: T0 });
      steps.reopened = ids(await store.claimDeliveries(claim({ now: T1, paused: { k: T2 } })));
      // Closed: every head of k is taken.
      steps.closed = ids(await store.claimDeliveries(claim({ now: T2 })));
      return named(steps, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.paused).toEqual({ claimed: ['d2', 'd4', 'd6'], more: false });
    expect(sqlite.waiting).toMatchObject({ due: false, next: T1, d1: { next_attempt: T1 } });
    expect(sqlite.trial).toEqual({ claimed: ['d1'], more: false });
    expect(sqlite.onTrial).toEqual({ claimed: [], more: false });
    expect(sqlite.reopened).toEqual({ claimed: [], more: false });
    expect(sqlite.closed).toEqual({ claimed: ['d1', 'd3', 'd5'], more: false });
  });

  it('stops at the limit and at the scan, saying more may be due; an expired lease is taken again', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const { client, d } = await outbox(store, ['co1', 'co2', 'co3', 'co4', 'co5'], ['k', 'j']);
      return named({
        limited: ids(await store.claimDeliveries(claim({ limit: 2 }))),
        none: ids(await store.claimDeliveries(claim({ limit: 0 }))),
        scanned: ids(await store.claimDeliveries(claim({ scanLimit: 3 }))),
        rest: ids(await store.claimDeliveries(claim())),
        expired: ids(await store.claimDeliveries(claim({ now: LEASE, leaseUntil: '2026-02-01T02:00:00Z' }))),
        details: (await store.claimDeliveries(claim({ now: '2026-02-01T02:00:00Z', limit: 1 }))).claimed,
      }, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.limited).toEqual({ claimed: ['d1', 'd2'], more: true });
  });

  it('a disabled consumer holds its deliveries: none claimed, none moved along, the first disable alone says so', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const { client, d } = await outbox(store, ['co1', 'co1', 'co2'], ['k', 'j']);
      const steps: Record<string, unknown> = {};
      const first = await store.claimDeliveries(claim());
      steps.first = ids(first);
      steps.disabled = [await store.disableConsumerDeliveries('k', 'gone'), await store.disableConsumerDeliveries('k', 'gone again'), await store.disableConsumerDeliveries('nobody', 'x')];
      steps.consumer = await store.getConsumer('k');
      // The attempt in flight ends: the lane behind it stays held.
      await store.recordDeliveryAttempt(first.claimed.find((x) => x.id === d.d1)!.seq, attempt(T0), delivered);
      steps.held = { claim: ids(await store.claimDeliveries(claim())), due: await store.deliveriesDue(T0), log: await store.getDelivery('k', d.d3!) };
      // Disabled without parking (events' disableConsumer): the claim parks what it finds.
      await store.disableConsumer('j', 'by hand');
      await store.releaseDeliveryLeases();
      steps.plain = { claim: ids(await store.claimDeliveries(claim())), due: await store.deliveriesDue(T0) };
      return named(steps, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect((sqlite.held as { claim: unknown }).claim).toEqual({ claimed: [], more: false });
  });

  it('replays a delivery as a new one at the back of its lane, and finds an event’s newest delivery', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const { client, d } = await outbox(store, ['co1', 'co1'], ['k', 'j']);
      const steps: Record<string, unknown> = {};
      await store.claimDeliveries(claim());
      await store.recordDeliveryAttempt(1, attempt(T0), delivered);
      steps.replay = await store.replayDelivery('k', d.d1!, 'r1', T1);
      steps.notOwned = await store.replayDelivery('j', d.d1!, 'r2', T1);
      steps.missing = await store.replayDelivery('k', 'nope', 'r3', T1);
      steps.ofEvent = [await store.deliveryOfEvent('k', 1), await store.deliveryOfEvent('j', 1), await store.deliveryOfEvent('k', 99)];
      // d3 (e2 for k) is the lane's head, the replay waits behind it.
      const claims = [ids(await store.claimDeliveries(claim({ now: T1 })))];
      await store.recordDeliveryAttempt(3, attempt(T1), delivered);
      claims.push(ids(await store.claimDeliveries(claim({ now: T1 }))));
      steps.claims = claims;
      steps.duplicate = await refused(() => store.replayDelivery('k', d.d1!, 'r1', T1));
      return named(steps, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.claims).toEqual([{ claimed: ['d3'], more: false }, { claimed: ['r1'], more: false }]);
    expect((sqlite.replay as { id: string; status: string }).status).toBe('Pending');
  });

  it('pages the delivery log: newest first, filtered and ordered by the query language', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const client = await newClient(store);
      await store.insertConsumer(consumer('k', client, { event_types: '["company.created", "sync.completed"]' }));
      await store.insertConsumer(consumer('j', client));
      for (let i = 0; i < 12; i++) {
        const generated = `2026-02-0${1 + (i % 3)}T00:00:${String(i).padStart(2, '0')}Z`;
        await store.insertEvent(event(`e${i + 1}`, client, `co${i % 4}`, { generated, eventType: i % 2 ? 'sync.completed' : 'company.created' }));
      }
      // k wants both types, j company.created (the even ones).
      const d = deliveryNames(Array.from({ length: 12 }, (_, i): [string, string[]] => [`e${i + 1}`, i % 2 ? ['k'] : ['k', 'j']]));
      const first = await store.claimDeliveries(claim({ now: '2026-03-01T00:00:00Z' }));
      for (const [i, d] of first.claimed.entries()) {
        await store.recordDeliveryAttempt(d.seq, attempt(`2026-03-01T00:00:0${i}Z`, i % 2 ? 500 : 200), i % 2
          ? { status: 'Pending', nextAttempt: '2026-03-02T00:00:00Z', firstFailure: '2026-03-01T00:00:00Z' }
          : { status: 'Delivered', completed: `2026-03-01T00:00:0${i}Z` });
      }
      const page = (request: { page: number; pageSize: number; query?: string; orderBy?: string }) => store.runPage(store.webhookDeliveriesPage('k', request));
      return named({
        pages: [await page({ page: 1, pageSize: 5 }), await page({ page: 2, pageSize: 5 }), await page({ page: 3, pageSize: 5 }), await page({ page: 4, pageSize: 5 })],
        pending: await page({ page: 1, pageSize: 4, query: 'status = "pending"', orderBy: 'created' }),
        byType: await page({ page: 2, pageSize: 2, query: 'eventType ~ "SYNC"', orderBy: '-attempts' }),
        byDate: await page({ page: 1, pageSize: 20, query: 'created > 2026-02-02T00:00:00Z && attempts < 1' }),
        completed: await page({ page: 1, pageSize: 20, query: 'completed >= 2026-03-01', orderBy: '-completed' }),
        byEvent: await page({ page: 1, pageSize: 20, query: `eventId = "E3" || id = "${d.d1!}"` }),
        other: await store.runPage(store.webhookDeliveriesPage('j', { page: 1, pageSize: 3, orderBy: 'eventType' })),
        nobody: await store.runPage(store.webhookDeliveriesPage('nobody', { page: 1, pageSize: 3 })),
      }, { CLIENT: client, ...d });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.pages[0]!.total).toBe(12);
    expect(sqlite.pages[3]!.rows).toEqual([]);
  });

  it('on PostgreSQL, two pools claiming and recording at once, with events arriving, never lease one delivery twice nor two of one lane, and leave none behind', async () => {
    const pools = await twoPools();
    try {
      const [a, b] = pools.map((pool) => outboxMethods(pool)) as [OutboxStore, OutboxStore];
      const client = await newClient(a);
      for (const id of ['k', 'j']) await a.insertConsumer(consumer(id, client));
      const companies = ['co1', 'co2', 'co3', null];
      let events = 0;
      const newEvent = () => b.insertEvent(event(`e${++events}`, client, companies[events % companies.length]!, { generated: T0 }));
      for (let i = 0; i < 20; i++) await newEvent();
      const total = 2 * 40;

      const lanes = new Map<number, string>();
      const inFlight = new Map<number, string>();
      const settledOrder = new Map<string, number[]>();
      const problems: string[] = [];
      let settled = 0;
      const take = (result: ClaimResult) => {
        for (const d of result.claimed) {
          const lane = `${d.consumer_id}/${d.company_id ?? '-'}`;
          lanes.set(d.seq, lane);
          if (inFlight.has(d.seq)) problems.push(`d${d.seq} leased twice`);
          if ([...inFlight.values()].includes(lane)) problems.push(`two heads of ${lane}`);
          inFlight.set(d.seq, lane);
        }
      };
      const record = async (store: OutboxStore, seqs: number[]) => {
        for (const seq of seqs) {
          inFlight.delete(seq);
          await store.recordDeliveryAttempt(seq, attempt(T0), delivered);
          settledOrder.set(lanes.get(seq)!, [...settledOrder.get(lanes.get(seq)!) ?? [], seq]);
          settled += 1;
        }
      };
      // A claim in a transaction of the caller's, held open a little while the other pool works.
      const claimInTransaction = async (pool: Pool) => {
        const tx = await pool.connect();
        try {
          await tx.query('BEGIN');
          const result = await outboxMethods(tx).claimDeliveries(claim({ limit: 3 }));
          await new Promise((resolve) => setImmediate(resolve));
          await tx.query('COMMIT');
          return result;
        } finally {
          tx.release();
        }
      };
      const deadline = Date.now() + 30_000;
      while (settled < total && Date.now() < deadline) {
        const [fromA, fromB] = await Promise.all([claimInTransaction(pools[0]!), b.claimDeliveries(claim({ limit: 3 })), events < 40 ? newEvent() : undefined]);
        take(fromA);
        take(fromB);
        // Each pool records the other's attempts while claiming again, and another event comes.
        const [again] = await Promise.all([a.claimDeliveries(claim({ limit: 2 })), record(b, fromA.claimed.map((d) => d.seq)),
          record(a, fromB.claimed.map((d) => d.seq)), events < 40 ? newEvent() : undefined]);
        take(again);
        await record(b, again.claimed.map((d) => d.seq));
      }
      expect(problems).toEqual([]);
      expect(settled).toBe(total);
      // Each lane in seq order: one writer of events, committing in order.
      for (const seqs of settledOrder.values()) expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(await a.deliveriesDue(T0)).toBe(false);
      expect(await a.nextDeliveryDue(T0)).toBeUndefined();
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  // Each order of a claim and a settling that overlap: the second waits for the first to
  // commit, so the delivery behind the head is parked and then made due, or found due.
  it('on PostgreSQL, a head settled while a claim parks the delivery behind it leaves that delivery to be claimed, in either order', async () => {
    const pools = await twoPools();
    try {
      const answers: unknown[] = [];
      for (const claimFirst of [true, false]) {
        const [a, b] = pools.map((pool) => outboxMethods(pool)) as [OutboxStore, OutboxStore];
        const client = await newClient(a);
        const id = `k${answers.length}`;
        await a.insertConsumer(consumer(id, client));
        const d = deliveryNames([[`${id}-e1`, [id]], [`${id}-e2`, [id]]], `${id}-d`);
        await a.insertEvent(event(`${id}-e1`, client, 'co1', { generated: T0 }));
        const head = (await a.claimDeliveries(claim())).claimed[0]!;
        // The next of the lane arrives while its head is in flight: due, until a claim parks it.
        await a.insertEvent(event(`${id}-e2`, client, 'co1', { generated: T0 }));

        const tx = await pools[0]!.connect();
        let inside: ClaimResult | boolean;
        let outside: Promise<ClaimResult | boolean>;
        try {
          await tx.query('BEGIN');
          const held = outboxMethods(tx);
          inside = claimFirst ? await held.claimDeliveries(claim()) : await held.recordDeliveryAttempt(head.seq, attempt(T0), delivered);
          let done = false;
          outside = (claimFirst ? b.recordDeliveryAttempt(head.seq, attempt(T0), delivered) : b.claimDeliveries(claim())).finally(() => (done = true));
          // Until the other waits for this transaction (or, were nothing to stop it, has finished).
          await until(async () => done || await waitingForLocks(pools[0]!));
          await tx.query('COMMIT');
        } finally {
          tx.release();
        }
        const settledThenClaimed = [inside, await outside].map((r) => (typeof r === 'boolean' ? r : ids(r)));
        answers.push(named({ settledThenClaimed, after: ids(await a.claimDeliveries(claim())), next: await a.getDelivery(id, d[`${id}-d2`]!) }, d));
      }
      expect(answers.map((answer) => (answer as { settledThenClaimed: unknown }).settledThenClaimed)).toEqual([
        [{ claimed: [], more: false }, true],
        [true, { claimed: ['k1-d2'], more: false }],
      ]);
      expect(answers.map((answer) => (answer as { after: unknown }).after)).toEqual([{ claimed: ['k0-d2'], more: false }, { claimed: [], more: false }]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
  it('on PostgreSQL, a delivery committed after a later one of its lane was leased waits for it: never two of a lane in flight', async () => {
    const pools = await twoPools();
    try {
      const [a, b] = pools.map((pool) => outboxMethods(pool)) as [OutboxStore, OutboxStore];
      const client = await newClient(a);
      await a.insertConsumer(consumer('k', client));
      const d = deliveryNames([['e1', ['k']], ['e2', ['k']]]);
      const tx = await pools[0]!.connect();
      let steps: unknown[];
      try {
        // d1 (seq 1) is written first but committed last.
        await tx.query('BEGIN');
        await outboxMethods(tx).insertEvent(event('e1', client, 'co1', { generated: T0 }));
        await b.insertEvent(event('e2', client, 'co1', { generated: T0 }));
        steps = [ids(await b.claimDeliveries(claim()))];
        await tx.query('COMMIT');
      } finally {
        tx.release();
      }
      steps.push(ids(await b.claimDeliveries(claim())));
      await a.recordDeliveryAttempt(2, attempt(T0), delivered);
      steps.push(ids(await b.claimDeliveries(claim())));
      expect(named(steps, d)).toEqual([{ claimed: ['d2'], more: false }, { claimed: [], more: false }, { claimed: ['d1'], more: false }]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});
