// The backlog of background work as the database holds it: pulls queued and running per
// data type, and webhook deliveries still to make. Read from the store at each scrape, in
// the processes that run background work; every such process on one database reports the
// same figures, so alerts take their max (deploy/prometheus/alerts.yml), not their sum.
import { Gauge, type Registry } from 'prom-client';
import { isoSeconds, type Clock } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullBacklogRow } from '../store/monitoring.js';
import { dataTypeLabel } from './labels.js';
import { METRICS } from './metric-names.js';

type BacklogStore = Pick<AsyncStore, 'pullBacklog' | 'pendingDeliveryCount'>;

/** One read serves the queued and running gauges of a scrape (collected within milliseconds), never the next scrape's. */
const SHARED_READ_MS = 200;

export function backlogGauges(registry: Registry, store: BacklogStore, clock: Clock): void {
  let read: { at: number; rows: Promise<PullBacklogRow[]> } | undefined;
  const backlog = () => {
    const now = Date.now();
    if (!read || now - read.at > SHARED_READ_MS) read = { at: now, rows: store.pullBacklog(isoSeconds(clock.now())) };
    return read.rows;
  };
  const byDataType = (column: 'queued' | 'running') => async function (this: Gauge<'data_type'>) {
    this.reset();
    // The database unreachable: no figure rather than a stale one (ferry_database_unreachable says why).
    const rows = await backlog().catch(() => []);
    const sums = new Map<string, number>();
    for (const row of rows) sums.set(dataTypeLabel(row.data_type), (sums.get(dataTypeLabel(row.data_type)) ?? 0) + row[column]);
    for (const [dataType, n] of sums) this.set({ data_type: dataType }, n);
  };
  new Gauge({ name: METRICS.pullsQueued, help: 'Open pulls waiting for a worker (new, waiting to retry, or left by a lapsed lease), by data type; the database\'s figure.', labelNames: ['data_type'], registers: [registry], collect: byDataType('queued') });
  new Gauge({ name: METRICS.pullsRunning, help: 'Open pulls a worker holds a live lease on, by data type; the database\'s figure.', labelNames: ['data_type'], registers: [registry], collect: byDataType('running') });
  new Gauge({
    name: METRICS.deliveriesPending, help: 'Webhook deliveries still to make to enabled consumers (due, retrying, or queued behind another); the database\'s figure.', registers: [registry],
    async collect() {
      this.reset();
      const pending = await store.pendingDeliveryCount().catch(() => undefined);
      if (pending !== undefined) this.set(pending);
    },
  });
}
