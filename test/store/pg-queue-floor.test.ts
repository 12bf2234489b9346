// The claim reads the oldest lane from a floor, its first open pull as the last claim saw it
// (src/service/store/pg/jobs.ts), so it no longer walks the queue index's entries for every
// pull that was ever open. What it must not change: the order of claims, and the one pull
// that can sit below the floor (queued by a transaction that committed after a later one's)
// is still claimed, by the read from the start that comes every FULL_LOOK_MS and whenever
// the read from the floor finds nothing.
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FULL_LOOK_MS, jobMethods, newQueueFloor, type QueueFloor } from '../../src/service/store/pg/jobs.js';
import { pullMethods } from '../../src/service/store/pg/pulls.js';
import { run, type Queryable } from '../../src/service/store/pg/query.js';
import type { PullJob } from '../../src/service/store/pulls.js';
import { describePostgres } from '../helpers/postgres.js';
import { makeOwners, pgOwners, type Owners } from './contract/owners.js';
import { freshPostgres } from './contract/stores.js';

const T0 = '2024-03-01T10:00:00Z';
const LATER = '2024-03-01T10:05:00Z';
const methods = (db: Queryable, floor: QueueFloor) => ({ ...pullMethods(db), ...jobMethods(db, floor), ...pgOwners(db) });

describePostgres('the claim\'s floor on PostgreSQL', () => {
  let pool: Pool;
  let owners: Owners;
  let store: ReturnType<typeof methods>;
  const floor = newQueueFloor();
  const companies = new Map<string, string>();

  beforeAll(async () => {
    pool = await freshPostgres();
    store = methods(pool, floor);
    owners = await makeOwners(store);
    // Room below the queue's seqs for the pulls the tests move there.
    await pool.query('ALTER TABLE pull_operations ALTER COLUMN seq RESTART WITH 1000000');
  });
  afterAll(async () => {
    await pool.end();
  });

  /** A company with two queued pulls, named for the test's answers. */
  async function queued(name: string): Promise<string> {
    const id = (await store.insertCompany(owners.client, { name, tags: {} }, T0)).id;
    const connection = (await store.insertConnection(id, 'gbol', 'xero', T0)).id;
    for (const dataType of ['invoices', 'bills']) {
      await store.insertPull({ id: `${name}-${dataType}`, companyId: id, connectionId: connection, dataType, status: 'Queued', generation: 1, requested: T0 });
    }
    companies.set(id, name);
    return id;
  }
  const claim = async (): Promise<string[]> => (await store.claimJobs(T0, LATER, 1)).map((job: PullJob) => companies.get(job.companyId) ?? job.companyId);
  const end = (name: string) => run(pool, "UPDATE pull_operations SET status = 'Complete', lease_until = NULL WHERE id LIKE ?", [`${name}-%`]);
  const seqOf = async (id: string) => (await store.getPull(id))!.seq;

  it('claims in the queue\'s order, reading from the first open pull of the lane', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await queued(name);
    expect(await claim()).toEqual(['a']);
    expect(floor.seq).toBe(await seqOf('a-invoices')); // a is open (leased): the floor stays on it
    await end('a');
    expect(await claim()).toEqual(['b']);
    expect(floor.seq).toBe(await seqOf('b-invoices')); // a ended: the floor moved to b
    // b's lease runs out while it is still open: at or above the floor, so it comes first again.
    await run(pool, "UPDATE pull_operations SET lease_until = '2024-03-01T09:00:00Z' WHERE id LIKE 'b-%'");
    expect(await claim()).toEqual(['b']);
    expect(await claim()).toEqual(['c']);
  });

  it('takes a pull below the floor at the next read from the start, and when nothing is left above it', async () => {
    await end('b');
    await end('c');
    expect(await claim()).toEqual(['d']);
    const floorAt = floor.seq;
    expect(floorAt).toBe(await seqOf('d-invoices'));
    // Two companies queued, one of them with seqs from before the floor: as if its transaction
    // had taken its seqs first and committed last.
    await queued('e');
    await queued('late');
    await run(pool, 'UPDATE pull_operations SET seq = seq - ? WHERE id LIKE \'late-%\'', [10_000]);
    expect(await seqOf('late-invoices')).toBeLessThan(floorAt);
    // Read from the floor: e. Then nothing above the floor: the read from the start finds it.
    floor.lookedAt = performance.now(); // as if the last read from the start were just now, however slow the machine
    expect(await claim()).toEqual(['e']);
    expect(await claim()).toEqual(['late']);
    expect(await claim()).toEqual([]);
  });

  it('reads from the start once FULL_LOOK_MS has passed, so a pull below the floor waits no longer than that', async () => {
    for (const name of ['d', 'e', 'late']) await end(name);
    await queued('f');
    await queued('g');
    await queued('early');
    await run(pool, 'UPDATE pull_operations SET seq = seq - ? WHERE id LIKE \'early-%\'', [20_000]);
    expect(await claim()).toEqual(['early']); // the last claim found nothing: this one reads from the start
    await queued('late2');
    await run(pool, 'UPDATE pull_operations SET seq = seq - ? WHERE id LIKE \'late2-%\'', [40_000]);
    expect(await seqOf('late2-invoices')).toBeLessThan(floor.seq);
    floor.lookedAt = performance.now();
    expect(await claim()).toEqual(['f']); // from the floor
    floor.lookedAt -= FULL_LOOK_MS; // as if a second had passed since the last read from the start
    expect(await claim()).toEqual(['late2']);
    expect(await claim()).toEqual(['g']);
  });
});
