// The operator's reads of the SQLite store (../monitoring.ts).
import type { PullBacklogRow } from '../monitoring.js';
import { listMigrations, type Db } from './db.js';
import { prepared } from './statements.js';

let known: Array<{ version: number; name: string }> | undefined;

/** The migrations newer than the file's user_version (the last one applied). */
export function pendingMigrations(db: Db): string[] {
  known ??= listMigrations().map(({ version, name }) => ({ version, name }));
  const current = db.pragma('user_version', { simple: true }) as number;
  return known.filter((m) => m.version > current).map((m) => m.name);
}

export function pullBacklog(db: Db, now: string): PullBacklogRow[] {
  return prepared(db, `SELECT data_type, count(*) - count(CASE WHEN lease_until > ? THEN 1 END) AS queued, count(CASE WHEN lease_until > ? THEN 1 END) AS running
    FROM pull_operations WHERE status IN ('Queued', 'Fetching', 'Mapping') GROUP BY data_type ORDER BY data_type`).all(now, now) as PullBacklogRow[];
}

export function pendingDeliveryCount(db: Db): number {
  // A disabled consumer's deliveries are held for good: they are no work waiting to be done.
  return prepared(db, `SELECT count(*) FROM webhook_deliveries d JOIN webhook_consumers c ON c.id = d.consumer_id
    WHERE d.status = 'Pending' AND c.disabled = 0`).pluck().get() as number;
}
