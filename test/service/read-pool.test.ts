// One client's costly reads must not stall the others: each request's cost is bounded,
// costly reads run in reader threads (own connections, real worker threads here), and
// clients take turns at them. Timing is the bench's job (bench/fairness.mjs); these
// tests prove the order and the behaviour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/service/read-pool/fair-queue.js';
import { ReadPool } from '../../src/service/read-pool/pool.js';
import type { PagePlan } from '../../src/service/store/paging.js';
import { join } from 'node:path';
import { expectErrorBody } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Reader Ltd', 'Paid')).apiKey;
  for (let i = 0; i < 30; i++) await t.call('POST', '/companies', { apiKey: key, body: { name: `Company ${i}`, tags: { group: i % 2 ? 'odd' : 'even' } } });
});

afterAll(async () => {
  await t?.stop();
});

const list = (search: string) => t.call('GET', `/companies?${search}`, { apiKey: key });

describe('the cost of one request is bounded', () => {
  const clauses = (n: number) => `query=${encodeURIComponent(Array.from({ length: n }, (_, i) => `name!=x${i}`).join('&&'))}`;
  it.each([
    {
      limit: 'at most 20 clauses in a query', allowed: clauses(20), refused: clauses(21),
      message: 'Error parsing query - At most 20 clauses in query per request; split the search into several requests.',
    },
    {
      limit: 'at most 3 ~ clauses', allowed: `query=${encodeURIComponent('name~a||name~b||name~c')}`, refused: `query=${encodeURIComponent('name~a||name~b||name~c||name~d')}`,
      message: 'Error parsing query - At most 3 ~ (contains) clauses in query per request; split the search into several requests.',
    },
    {
      limit: 'at most 3 orderBy fields', allowed: 'orderBy=name,-created,id', refused: 'orderBy=name,-created,id,lastSync',
      message: 'Error parsing query - At most 3 orderBy fields per request; split the search into several requests.',
    },
  ])('$limit', async ({ allowed, refused, message }) => {
    expect((await list(allowed)).status).toBe(200);
    expectErrorBody(await list(refused), 400, message);
  });
});

describe('reads through the reader threads', () => {
  it('answer exactly what the request thread answers: rows, order, totals, links', async () => {
    const searches = ['query=tags.group%3Dodd&orderBy=-name&pageSize=4&page=2', 'orderBy=name&pageSize=7', 'query=name~1&pageSize=3'];
    const inline = await startTestStack('service', { dataDir: t.dataDir, readThreads: 0 });
    try {
      for (const search of searches) {
        const pooled = await list(search);
        const direct = await inline.call('GET', `/companies?${search}`, { apiKey: key });
        expect(pooled.status).toBe(200);
        expect(pooled.body).toEqual({ ...direct.body, results: direct.body.results.map((r: Record<string, unknown>) => ({ ...r, redirect: expect.any(String) })) });
        expect(pooled.body.results.map((r: { id: string }) => r.id)).toEqual(direct.body.results.map((r: { id: string }) => r.id));
      }
    } finally {
      await inline.service.close();
    }
  });
});

/** A plan that keeps SQLite busy for a while (a recursive count), then answers one row. */
function slowPlan(tag: string, steps = 300_000): PagePlan {
  return {
    countSql: `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${steps}) SELECT count(*) AS n FROM r`,
    rowsSql: `SELECT '${tag}' AS tag LIMIT ? OFFSET ?`,
    params: [],
    limit: 1,
    offset: 0,
    heavy: true,
  };
}

describe('clients take turns at the reader threads', () => {
  it('with one reader, a second client\'s read runs next, not after the first client\'s whole queue', async () => {
    const pool = new ReadPool(t.service.store, { dbFile: join(t.dataDir, 'ferry.db'), threads: 1 });
    try {
      const finished: string[] = [];
      const read = (client: string, tag: string) => pool.page<{ tag: string }>(client, slowPlan(tag)).then((page) => finished.push(page.rows[0]!.tag));
      const a = ['a1', 'a2', 'a3', 'a4'].map((tag) => read('A', tag));
      expect(pool.waiting('A')).toBe(3);
      const b = read('B', 'b1');
      await Promise.all([...a, b]);
      expect(finished).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
    } finally {
      await pool.close();
    }
  });

  it('a client past its queue bound gets 429, others are still served', async () => {
    const pool = new ReadPool(t.service.store, { dbFile: join(t.dataDir, 'ferry.db'), threads: 1, maxWaitingPerClient: 2 });
    try {
      const accepted = [pool.page('A', slowPlan('a1')), pool.page('A', slowPlan('a2')), pool.page('A', slowPlan('a3'))];
      await expect(pool.page('A', slowPlan('a4'))).rejects.toMatchObject({ statusCode: 429 });
      await expect(pool.page<{ tag: string }>('B', slowPlan('b1', 10))).resolves.toMatchObject({ rows: [{ tag: 'b1' }] });
      await Promise.all(accepted);
    } finally {
      await pool.close();
    }
  });

  it('a read that fails in a reader fails alone; the next one is served', async () => {
    const pool = new ReadPool(t.service.store, { dbFile: join(t.dataDir, 'ferry.db'), threads: 1 });
    try {
      await expect(pool.page('A', { ...slowPlan('x'), countSql: 'SELECT nope FROM nowhere' })).rejects.toThrow(/no such table/);
      await expect(pool.page<{ tag: string }>('A', slowPlan('ok', 10))).resolves.toMatchObject({ rows: [{ tag: 'ok' }] });
    } finally {
      await pool.close();
    }
  });

  it('closing stops the readers and refuses what was waiting', async () => {
    const pool = new ReadPool(t.service.store, { dbFile: join(t.dataDir, 'ferry.db'), threads: 1 });
    const running = pool.page('A', slowPlan('a1'));
    const waiting = pool.page('A', slowPlan('a2'));
    const closed = pool.close();
    await expect(waiting).rejects.toMatchObject({ statusCode: 503 });
    await closed;
    await running.catch(() => undefined);
    await expect(pool.page('A', slowPlan('late', 10))).rejects.toMatchObject({ statusCode: 503 });
  });
});

describe('FairQueue', () => {
  it('gives each waiting client its share of the slots, in turn', () => {
    const queue = new FairQueue<string>(2, 10);
    for (const job of ['a1', 'a2', 'a3']) queue.add('A', job);
    queue.add('B', 'b1');
    queue.add('C', 'c1');
    // Three clients, two slots: one each for the first two in turn.
    expect([queue.take()?.job, queue.take()?.job, queue.take()]).toEqual(['a1', 'b1', undefined]);
    queue.done('A');
    expect(queue.take()?.job).toBe('c1');
    queue.done('B');
    queue.done('C');
    expect([queue.take()?.job, queue.take()?.job]).toEqual(['a2', 'a3']);
  });

  it('lets a client alone use every slot', () => {
    const queue = new FairQueue<string>(2, 10);
    queue.add('A', 'a1');
    queue.add('A', 'a2');
    expect([queue.take()?.job, queue.take()?.job]).toEqual(['a1', 'a2']);
  });
});
