// The database's version as this connection sees it: `data_version` moves when another
// connection (the sync worker's) commits, `total_changes()` when this one writes. Equal
// versions mean nothing has changed, so anything derived from the data may be reused.
import { KEYED_COLUMNS, keyedVersion, type KeyedRow, type KeyedVersion } from '../clients.js';
import type { Db } from './db.js';
import { prepared } from './statements.js';

const VERSION = "(SELECT data_version FROM pragma_data_version) || ':' || total_changes()";

export function dataVersion(db: Db): string {
  return prepared(db, `SELECT ${VERSION} AS v`).pluck().get() as string;
}

/** The version, the key with this hash and its account, read together (as pg/version.ts does in one round trip). */
export function versionAndKey(db: Db, keyHash: string): KeyedVersion {
  const found = prepared(db, `SELECT ${VERSION} AS v, ${KEYED_COLUMNS}
    FROM (SELECT 1) LEFT JOIN api_keys k ON k.key_hash = ? LEFT JOIN clients c ON c.id = k.client_id`).get(keyHash) as KeyedRow;
  return keyedVersion(found);
}
