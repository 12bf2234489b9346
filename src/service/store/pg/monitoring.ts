// The operator's reads of the PostgreSQL store (../monitoring.ts), as ../sqlite/monitoring.ts.
import type { AsyncStore } from '../async-store.js';
import type { MonitoringStore } from '../store.js';
import type { PullBacklogRow } from '../monitoring.js';
import { listPgMigrations } from './migrate.js';
import { row, rows, type Queryable } from './query.js';

let known: string[] | undefined;

export function monitoringMethods(db: Queryable): Pick<AsyncStore, keyof MonitoringStore> {
  return {
    pendingMigrations: async () => {
      known ??= listPgMigrations().map((m) => m.name);
      const applied = new Set((await rows<{ name: string }>(db, 'SELECT name FROM schema_migrations')).map((r) => r.name));
      return known.filter((name) => !applied.has(name));
    },
    pullBacklog: (now) => rows<PullBacklogRow>(db, `SELECT data_type, (count(*) - count(*) FILTER (WHERE lease_until > ?))::int AS queued,
      (count(*) FILTER (WHERE lease_until > ?))::int AS running
      FROM pull_operations WHERE status IN ('Queued', 'Fetching', 'Mapping') GROUP BY data_type ORDER BY data_type COLLATE "C"`, [now, now]),
    pendingDeliveryCount: async () => (await row<{ n: number }>(db, `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_consumers c ON c.id = d.consumer_id
      WHERE d.status = 'Pending' AND c.disabled = 0`))!.n,
  };
}
