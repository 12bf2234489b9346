// The shared rate limit's ledger on PostgreSQL: the settle adds up under concurrency, its
// arithmetic is the bucket's, and three SharedRateLimiter instances on three pools hold one
// key's limit between them in real time.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Pool } from 'pg';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { SharedRateLimiter } from '../../src/service/shared-rate-limit.js';
import { migratePostgres } from '../../src/service/store/pg/migrate.js';
import { pgRateLedger, RATE_LEDGER_STALE_MS } from '../../src/service/store/pg/rate-ledger.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

describePostgres('rate ledger on PostgreSQL', () => {
  let url: string;
  const pools: Pool[] = [];
  const pool = (): Pool => {
    const created = new Pool({ connectionString: url, max: 4 });
    // The database is dropped WITH (FORCE) after the suite: a connection ended then is no failure.
    created.on('error', () => undefined);
    created.on('connect', (client) => client.on('error', () => undefined));
    pools.push(created);
    return created;
  };
  const limiters: SharedRateLimiter[] = [];

  beforeAll(async () => {
    url = await freshDatabase();
    const first = pool();
    await migratePostgres(first);
  });
  afterEach(async () => {
    for (const limiter of limiters.splice(0)) limiter.close();
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });

  const T0 = Date.UTC(2026, 0, 1);
  const settleOnce = (p: Pool, instance: string, key: string, used: number, now: number, since = now) =>
    pgRateLedger(p)({ instance, limit: 100, now, activeWithinMs: 1_000, used: [{ key, used, since }] });

  it('settles one key from two pools at once: every use counts once, one at a time', async () => {
    const [a, b] = [pool(), pool()];
    const limit = 1_000_000;
    // The same `now` throughout: no refill, so the bucket is the limit less every use.
    const settle = (p: Pool, instance: string) => pgRateLedger(p)({ instance, limit, now: T0, activeWithinMs: 1_000, used: [{ key: 'key:race', used: 1, since: T0 }] });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => settle(i % 2 ? a : b, i % 2 ? 'a' : 'b')));
    const seen = answers.map((answer) => answer.buckets.get('key:race')!.tokens).sort((x, y) => y - x);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => limit - 1 - i));
    expect(answers.at(-1)!.instances).toBe(2);
    const { rows } = await a.query<{ tokens: number }>("SELECT tokens FROM rate_ledger WHERE key = 'key:race'");
    expect(rows[0]!.tokens).toBe(limit - 60);
  });

  it("refills at limit per second up to the limit, owes at most one burst, and counts recent instances", async () => {
    const p = pool();
    // New: full when first taken 300 ms before, 50 used, 30 refilled since.
    expect((await settleOnce(p, 'i1', 'key:math', 50, T0 + 300, T0)).buckets.get('key:math')).toEqual({ tokens: 80, at: T0 + 300 });
    // 200 ms later: 20 refilled (up to the limit), 5 used.
    expect((await settleOnce(p, 'i1', 'key:math', 5, T0 + 500)).buckets.get('key:math')).toEqual({ tokens: 95, at: T0 + 500 });
    // 4.5 s later: capped at the limit, then 10 used.
    expect((await settleOnce(p, 'i2', 'key:math', 10, T0 + 5_000)).buckets.get('key:math')).toEqual({ tokens: 90, at: T0 + 5_000 });
    // A clock behind: no refill, and `at` stays.
    expect((await settleOnce(p, 'i3', 'key:math', 300, T0 + 4_000)).buckets.get('key:math')).toEqual({ tokens: -100, at: T0 + 5_000 });
    // i1 settled 4.5 s before: no longer counted.
    expect((await settleOnce(p, 'i2', 'key:other', 0, T0 + 5_000)).instances).toBe(2);
    // Nothing to settle: just counted.
    const empty = await pgRateLedger(p)({ instance: 'i4', limit: 100, now: T0 + 5_000, activeWithinMs: 1_000, used: [] });
    expect(empty).toEqual({ buckets: new Map(), instances: 3 });
  });

  it('deletes buckets and instances nobody settled for a minute: they mean full buckets', async () => {
    const p = pool();
    await p.query("INSERT INTO rate_ledger (key, tokens, at) VALUES ('key:old', -100, $1), ('key:recent', 0, $2)", [T0, T0 + RATE_LEDGER_STALE_MS]);
    await p.query("INSERT INTO rate_instances (instance, seen) VALUES ('gone', $1)", [T0]);
    await settleOnce(p, 'i9', 'key:new', 1, T0 + RATE_LEDGER_STALE_MS + 1);
    const keys = await p.query<{ key: string }>("SELECT key FROM rate_ledger WHERE key IN ('key:old', 'key:recent', 'key:new') ORDER BY key");
    expect(keys.rows.map((row) => row.key)).toEqual(['key:new', 'key:recent']);
    const instances = await p.query<{ instance: string }>("SELECT instance FROM rate_instances WHERE instance IN ('gone', 'i9')");
    expect(instances.rows.map((row) => row.instance)).toEqual(['i9']);
  });

  it('3 instances on 3 pools hammering one key for 3 s admit within 10% of limit × seconds + the burst', async () => {
    const limit = 200;
    const errors: Error[] = [];
    for (let i = 0; i < 3; i++) {
      limiters.push(new SharedRateLimiter({ limit, clock: systemClock, settle: pgRateLedger(pool()), onError: (err) => errors.push(err) }));
    }
    // Every instance has settled and counts the three.
    const ready = Date.now() + 10_000;
    while (limiters.some((limiter) => limiter.instances !== 3)) {
      if (Date.now() > ready) throw new Error(`instances never saw each other: ${limiters.map((l) => l.instances).join(', ')}`);
      await nextTurn();
    }

    const admitted = [0, 0, 0];
    let requests = 0;
    const start = Date.now();
    const end = start + 3_000;
    while (Date.now() < end) {
      limiters.forEach((limiter, i) => {
        for (let n = 0; n < 3; n++) if (limiter.take('key:hammer').allowed) admitted[i]!++;
      });
      requests += 9;
      await nextTurn();
    }
    const seconds = (Date.now() - start) / 1000;
    const total = admitted.reduce((a, b) => a + b, 0);
    const expected = limit * seconds + limit;
    expect(errors).toEqual([]);
    // Far more asked than allowed, from every instance.
    expect(requests / seconds).toBeGreaterThan(10 * limit);
    expect(Math.abs(total - expected) / expected, `admitted ${admitted.join(' + ')} = ${total} in ${seconds} s, expected ${expected}`).toBeLessThanOrEqual(0.1);
  });
});
