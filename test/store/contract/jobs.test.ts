// Jobs on both stores: a company's claimable pulls leased together under one lease, in the
// queue's order (the interactive lane first, then the oldest pull across companies); their
// leases renewed and freed together, only while this lease holds them; the lane's companies
// per account.
import { expect, it } from 'vitest';
import { jobMethods, newQueueFloor } from '../../../src/service/store/pg/jobs.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import type { PullJob } from '../../../src/service/store/pulls.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel, type Owners } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pullMethods(db), ...jobMethods(db, newQueueFloor()), ...pgOwners(db) });
type Store = ReturnType<typeof methods>;

const T0 = '2024-03-01T10:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');
const shape = (jobs: PullJob[]) => jobs.map((job) => [job.companyId, job.lease, ...job.pulls.map((pull) => pull.id)]);

/** Company a's pulls queued first, then b's; a third company c, of the same account, queued last in the lane. */
async function seed(store: Store, o: Owners): Promise<string> {
  const c = (await store.insertCompany(o.client, { name: 'C', tags: {} }, T0)).id;
  const c1 = (await store.insertConnection(c, 'gbol', 'xero', T0)).id;
  const pull = { status: 'Queued' as const, generation: 1, requested: T0 };
  await store.insertPull({ ...pull, id: 'a-invoices', companyId: o.a, connectionId: o.a1, dataType: 'invoices' });
  await store.insertPull({ ...pull, id: 'b-invoices', companyId: o.b, connectionId: o.b1, dataType: 'invoices' });
  await store.insertPull({ ...pull, id: 'a-bills', companyId: o.a, connectionId: o.a2, dataType: 'bills' });
  await store.insertPull({ ...pull, id: 'b-bills', companyId: o.b, connectionId: o.b1, dataType: 'bills' });
  await store.insertPull({ ...pull, id: 'c-invoices', companyId: c, connectionId: c1, dataType: 'invoices', priority: 1 });
  await store.insertPull({ ...pull, id: 'a-done', companyId: o.a, connectionId: o.a1, dataType: 'customers', status: 'Complete' });
  return c;
}

describePostgres('job store contract', () => {
  it('claims the interactive lane first, then the oldest pull\'s company, every claimable pull of it under one lease', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const c = await seed(store, o);
      o.names.set(c, '<c>');
      await store.updatePull('b-bills', { not_before: at(30) }); // waits for its retry time
      const answers: unknown[] = [];
      answers.push(shape(await store.claimJobs(at(1), at(5), 0)));
      answers.push(shape(await store.claimJobs(at(1), at(5), 2))); // c (the lane), then a (the oldest)
      answers.push(shape(await store.claimJobs(at(2), at(6), 5))); // b, without its pull that waits
      answers.push(shape(await store.claimJobs(at(3), at(7), 5))); // nothing left
      answers.push(shape(await store.claimJobs(at(31), at(40), 5))); // every lease ran out: c, a, then b whole
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([
      [],
      [['<c>', at(5), 'c-invoices'], ['<a>', at(5), 'a-invoices', 'a-bills']],
      [['<b>', at(6), 'b-invoices']],
      [],
      [['<c>', at(40), 'c-invoices'], ['<a>', at(40), 'a-invoices', 'a-bills'], ['<b>', at(40), 'b-invoices', 'b-bills']],
    ]);
  });

  it('renews and frees a job\'s leases in one call, only those its lease still holds', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seed(store, o);
      const job = (await store.claimJobs(at(1), at(5), 2))[1]; // a's, after c's in the lane
      const ids = job!.pulls.map((pull) => pull.id).concat('missing');
      const answers: unknown[] = [];
      // One pull ended, and one was taken over by another worker after its lease ran out.
      await store.updatePull('a-bills', { status: 'Complete', lease_until: null }, at(5));
      answers.push(await store.renewPullLeases(ids, at(4), at(9))); // not this job's lease: nothing
      answers.push((await store.renewPullLeases(ids, at(5), at(9))).sort()); // the open one
      answers.push(await store.leasePull('a-invoices', at(10), at(20)));
      answers.push(await store.renewPullLeases(ids, at(9), at(14))); // taken over: nothing
      answers.push(await store.renewPullLeases([], at(9), at(14)));
      await store.releasePullLeases(ids, at(9)); // not its lease any more: left as it is
      answers.push((await store.getPull('a-invoices'))!.lease_until);
      await store.releasePullLeases(['a-invoices'], at(20));
      answers.push((await store.getPull('a-invoices'))!.lease_until);
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([[], ['a-invoices'], true, [], [], at(20), null]);
  });

  it('names an account\'s companies in the interactive lane, and moves a company\'s open pulls into it', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const c = await seed(store, o);
      o.names.set(c, '<c>');
      const answers: unknown[] = [];
      answers.push(await store.interactiveCompanies(o.client));
      await store.raisePullPriority(o.a);
      answers.push(relabel(await store.interactiveCompanies(o.client), o.names).sort());
      answers.push((await store.getPull('a-done'))!.priority); // ended: stays where it was
      answers.push(await store.interactiveCompanies('another-client'));
      // Once its pulls end, a company leaves the lane.
      await store.updatePull('c-invoices', { status: 'Complete' });
      answers.push(await store.interactiveCompanies(o.client));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([['<c>'], ['<a>', '<c>'].sort(), 0, [], ['<a>']]);
  });
});
