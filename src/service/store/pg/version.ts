// The database's version on PostgreSQL, the key of the response and auth caches: equal
// versions must mean no write has committed since, from any ferry process.
//
// It is the current snapshot, pg_current_snapshot() (PostgreSQL 13+) as text
// (`xmin:xmax:xip…`). A snapshot decides what a statement sees: every transaction id below
// xmax and not listed as in progress has ended. So when any writing transaction commits (it
// holds a transaction id from its first write), either it was listed in progress and leaves
// the list, or it was at or above xmax and xmax moves past it: the text changes, whichever
// process committed. And two equal texts see exactly the same committed transactions, so
// the same data. Reading it takes no transaction id and writes nothing.
//
// Chosen over a version row bumped by every writing transaction: that is one more write
// per transaction, and every writer in every process would queue on the same row lock.
// The price here is spurious changes, never missed ones: the ids are the cluster's, so
// commits in other databases of the same server, and rollbacks, move it too; a cache then
// rebuilds what it already had. Inside a transaction it is that transaction's snapshot
// (fixed under REPEATABLE READ), which is what the transaction reads; its own writes move
// it once they commit, not before (SQLite's total_changes() moves at once).
import type { AsyncStore } from '../async-store.js';
import { row, type Queryable } from './query.js';

export function versionMethods(db: Queryable): Pick<AsyncStore, 'dataVersion'> {
  return {
    dataVersion: async () => (await row<{ v: string }>(db, 'SELECT pg_current_snapshot()::text AS v'))!.v,
  };
}
