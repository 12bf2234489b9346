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
// On the pool, reads are shared: every request asks (with the API key it gave, versionAndKey),
// and a round trip each would cost more than a cached page or a known key saves. The requests
// that ask while a read is in flight share the next one, which looks up all their keys.
import { Pool } from 'pg';
import type { AsyncStore } from '../async-store.js';
import { KEYED_COLUMNS, keyedVersion, type KeyedRow, type KeyedVersion } from '../clients.js';
import type { VersionStore } from '../store.js';
import { rows, type Queryable } from './query.js';

/** The version, and the keys with these hashes and their accounts: one row per hash (one row with no key when none is asked). */
const KEYED_READ = `SELECT s.v, h.hash, ${KEYED_COLUMNS}
  FROM (SELECT pg_current_snapshot()::text AS v) s
  LEFT JOIN (unnest(?::text[]) AS h (hash) LEFT JOIN api_keys k ON k.key_hash = h.hash LEFT JOIN clients c ON c.id = k.client_id) ON true`;

/** One read's answer: the version, and what it found for each hash asked. */
interface Snapshot {
  version: string;
  keys: Map<string, KeyedVersion>;
}

async function readSnapshot(db: Queryable, hashes: readonly string[]): Promise<Snapshot> {
  const found = await rows<KeyedRow & { hash: string | null }>(db, KEYED_READ, [hashes]);
  const keys = new Map<string, KeyedVersion>();
  for (const { hash, ...keyed } of found) if (hash !== null) keys.set(hash, keyedVersion(keyed));
  return { version: found[0]!.v, keys };
}

export function versionMethods(db: Queryable): Pick<AsyncStore, keyof VersionStore> {
  const read = db instanceof Pool ? sharedReads((hashes) => readSnapshot(db, hashes)) : (hashes: readonly string[]) => readSnapshot(db, hashes);
  return {
    dataVersion: async () => (await read([])).version,
    versionAndKey: async (keyHash) => {
      const snapshot = await read([keyHash]);
      return snapshot.keys.get(keyHash) ?? { version: snapshot.version };
    },
  };
}

/**
 * A call is answered by a read sent after it was made, so the answer shows every commit
 * that ended before the call (what the caches need). With no read in flight, the call sends
 * one; calls made while one is in flight wait for the next, sent when that one ends, which
 * looks up every hash they asked for and answers them all: at most one read in flight and
 * one waiting, however many requests ask.
 */
export function sharedReads(read: (hashes: readonly string[]) => Promise<Snapshot>): (hashes: readonly string[]) => Promise<Snapshot> {
  let inFlight: Promise<Snapshot> | undefined;
  let waiting: { hashes: Set<string>; answer: Promise<Snapshot> } | undefined;
  const send = (hashes: Set<string>): Promise<Snapshot> => {
    const sent = read([...hashes]);
    inFlight = sent;
    const done = (): void => {
      if (inFlight === sent) inFlight = undefined;
    };
    sent.then(done, done);
    return sent;
  };
  return (hashes) => {
    if (waiting) {
      for (const hash of hashes) waiting.hashes.add(hash);
      return waiting.answer;
    }
    if (!inFlight) return send(new Set(hashes));
    const asked = new Set(hashes);
    const answer = inFlight.then(() => undefined, () => undefined).then(() => {
      waiting = undefined;
      return send(asked);
    });
    waiting = { hashes: asked, answer };
    return answer;
  };
}
