// What read.completed rests on, in one read (readCompletion), answers on PostgreSQL as on
// SQLite: nothing while a pull of the company is open; else the previous read.completed's
// time and the pulls named by the data type events since it, oldest first.
import { expect, it } from 'vitest';
import { eventMethods } from '../../../src/service/store/pg/events.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pullMethods(db), ...eventMethods(db), ...pgOwners(db) });

const T0 = '2024-03-01T10:00:00Z';
const TYPES = { completed: 'read.completed', ended: ['data.ended', 'data.failed'] };

describePostgres('read completion', () => {
  it('answers nothing while a pull is open, then the previous read.completed and the pulls ended since', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      let n = 0;
      const record = (companyId: string, eventType: string, pullOperationId?: string) => store.insertEvent({
        id: `e${++n}`, clientId: o.client, companyId, companyTags: [], eventType, generated: `2024-03-01T11:00:${String(n).padStart(2, '0')}Z`,
        body: JSON.stringify({ id: `e${n}`, eventType, payload: pullOperationId ? { pullOperationId } : {} }),
      });
      const pull = (id: string, companyId: string, dataType: string, status: 'Queued' | 'Complete' | 'FetchError') =>
        store.insertPull({ id, companyId, connectionId: companyId === o.a ? o.a1 : o.b1, dataType, status, generation: 1, requested: T0 });
      const answers: unknown[] = [await store.readCompletion(o.a, TYPES)]; // no pulls, no events
      await pull('p1', o.a, 'invoices', 'Complete');
      await record(o.a, 'data.ended', 'p1');
      await pull('p2', o.a, 'bills', 'Queued');
      answers.push(await store.readCompletion(o.a, TYPES)); // p2 open
      await store.updatePull('p2', { status: 'FetchError', completed: T0 });
      await record(o.a, 'data.failed', 'p2');
      await record(o.a, 'other.event', 'p9');
      await pull('p3', o.b, 'invoices', 'Complete');
      await record(o.b, 'data.ended', 'p3');
      answers.push(await store.readCompletion(o.a, TYPES)); // no read.completed yet: p1, p2
      await record(o.a, 'read.completed');
      await pull('p4', o.a, 'invoices', 'Complete');
      await record(o.a, 'data.ended', 'p4');
      answers.push(await store.readCompletion(o.a, TYPES)); // since the read.completed: p4
      answers.push(await store.readCompletion(o.b, TYPES));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    const [none, open, first, second, other] = sqlite as Array<{ previousGenerated: string | null; pulls: Array<{ id: string }> } | undefined>;
    expect(none).toEqual({ previousGenerated: null, pulls: [] });
    expect(open).toBeUndefined();
    expect(first?.previousGenerated).toBeNull();
    expect(first?.pulls.map((p) => p.id)).toEqual(['p1', 'p2']);
    expect(first?.pulls[1]).toMatchObject({ status: 'FetchError', data_type: 'bills' });
    expect(second?.previousGenerated).toBe('2024-03-01T11:00:05Z');
    expect(second?.pulls.map((p) => p.id)).toEqual(['p4']);
    expect(other?.pulls.map((p) => p.id)).toEqual(['p3']);
  });
});
