// Queuing pulls: one per (company, data type) at a time. A request for a data set that
// already has an open pull returns that pull instead of queuing another.
import { randomUUID } from 'node:crypto';
import { isoSeconds, type Clock } from '../../lib/clock.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { ConnectionRow } from '../store/connections.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullRow } from '../store/pulls.js';
import { CUSTOM_PREFIX } from './pull-source.js';

/** A new pull of the data set; the caller holds the transaction and has checked for an open one. */
async function addPull(store: AsyncStore, requested: string, connection: ConnectionRow, dataType: string): Promise<PullRow> {
  const integration = integrationByKey(connection.integration_key);
  // A custom data type's source is checked when its pull runs (its configuration may change until then).
  const supported = dataType.startsWith(CUSTOM_PREFIX) || (integration?.dataTypes.includes(dataType) ?? false);
  const id = randomUUID();
  const generation = await store.reserveGeneration(connection.company_id, dataType, id, requested);
  return store.insertPull({
    id,
    companyId: connection.company_id,
    connectionId: connection.id,
    dataType,
    status: supported ? 'Queued' : 'NotSupported',
    generation,
    requested,
    ...(supported ? {} : { statusDescription: `Datatype ${dataType} is not supported by ${integration?.name ?? connection.integration_key}` }),
  });
}

export function queuePull(store: AsyncStore, clock: Clock, connection: ConnectionRow, dataType: string): Promise<PullRow> {
  return store.transaction(async (tx) => (await tx.openPull(connection.company_id, dataType)) ?? addPull(tx, isoSeconds(clock.now()), connection, dataType));
}

/**
 * POST /data/all: every supported data type of every Linked connection of the company, in
 * one transaction with one look for open pulls, so a company costs one commit.
 */
export async function queueAll(store: AsyncStore, clock: Clock, connections: ConnectionRow[]): Promise<PullRow[]> {
  const linked = connections.filter((c) => c.status === 'Linked');
  if (linked.length === 0) return [];
  return store.transaction(async (tx) => {
    const requested = isoSeconds(clock.now());
    const open = await tx.openPulls(linked[0]!.company_id);
    const pulls: PullRow[] = [];
    for (const connection of linked) {
      for (const dataType of integrationByKey(connection.integration_key)?.dataTypes ?? []) {
        const pull = open.get(dataType) ?? await addPull(tx, requested, connection, dataType);
        open.set(dataType, pull);
        pulls.push(pull);
      }
    }
    return pulls;
  });
}
