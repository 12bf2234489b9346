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
//
// On the pool, reads are shared: every request asks twice (the auth cache, then the
// response cache), and a round trip each would cost more than the cached page saves.
import { Pool } from 'pg';
import type { AsyncStore } from '../async-store.js';
import type { VersionStore } from '../store.js';
import { row, type Queryable } from './query.js';

export function versionMethods(db: Queryable): Pick<AsyncStore, keyof VersionStore> {
  const read = async (): Promise<string> => (await row<{ v: string }>(db, 'SELECT pg_current_snapshot()::text AS v'))!.v;
  return { dataVersion: db instanceof Pool ? sharedReads(read) : read };
}

/**
 * A call is answered by a read sent after it was made, so the answer shows every commit
 * that ended before the call (what the caches need). With no read in flight, the call sends
 * one; calls made while one is in flight wait for the next, sent when that one ends, which
 * answers them all: at most one read in flight and one waiting, however many requests ask.
 */
export function sharedReads(read: () => Promise<string>): () => Promise<string> {
  let inFlight: Promise<string> | undefined;
  let waiting: Promise<string> | undefined;
  const send = (): Promise<string> => {
    const sent = read();
    inFlight = sent;
    const done = (): void => {
      if (inFlight === sent) inFlight = undefined;
    };
    sent.then(done, done);
    return sent;
  };
  return () => {
    if (waiting) return waiting;
    if (!inFlight) return send();
    const next = inFlight.then(() => undefined, () => undefined).then(() => {
      waiting = undefined;
      return send();
    });
    waiting = next;
    return next;
  };
}
