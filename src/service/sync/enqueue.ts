// Queuing pulls: one per (company, data type) at a time. A request for a data set that
// already has an open pull returns that pull instead of queuing another.
import { randomUUID } from 'node:crypto';
import { isoSeconds, type Clock } from '../../lib/clock.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { ConnectionRow } from '../store/connections.js';
import type { AsyncStore } from '../store/async-store.js';
import type { NewPull, PullRow } from '../store/pulls.js';
import { CUSTOM_PREFIX } from './pull-source.js';

/** A new pull of the data set, for queuePulls; the caller holds the transaction and has checked for an open one. */
function newPull(requested: string, connection: ConnectionRow, dataType: string, priority: number): NewPull {
  const integration = integrationByKey(connection.integration_key);
  // A custom data type's source is checked when its pull runs (its configuration may change until then).
  const supported = dataType.startsWith(CUSTOM_PREFIX) || (integration?.dataTypes.includes(dataType) ?? false);
  return {
    id: randomUUID(),
    companyId: connection.company_id,
    connectionId: connection.id,
    dataType,
    status: supported ? 'Queued' : 'NotSupported',
    requested,
    priority,
    ...(supported ? {} : { statusDescription: `Datatype ${dataType} is not supported by ${integration?.name ?? connection.integration_key}` }),
  };
}

/** `priority`: the lane's (lanes.ts), decided in the caller's transaction. */
export function queuePull(store: AsyncStore, clock: Clock, connection: ConnectionRow, dataType: string, priority = 0): Promise<PullRow> {
  return store.transaction(async (tx) => (await tx.openPull(connection.company_id, dataType))
    ?? (await tx.queuePulls([newPull(isoSeconds(clock.now()), connection, dataType, priority)]))[0]!);
}

/**
 * POST /data/all: every supported data type of every Linked connection of the company, in
 * one transaction, the look for open pulls and the queuing of the rest in one statement
 * (queueUnlessOpen), so a company costs one commit and a few round trips whatever its
 * number of data types.
 * A data type two connections serve gets one pull, listed for each.
 */
export async function queueAll(store: AsyncStore, clock: Clock, connections: ConnectionRow[], priority = 0): Promise<PullRow[]> {
  const linked = connections.filter((c) => c.status === 'Linked');
  if (linked.length === 0) return [];
  return store.transaction(async (tx) => {
    const requested = isoSeconds(clock.now());
    const listed: string[] = [];
    const wanted = new Map<string, NewPull>();
    for (const connection of linked) {
      for (const dataType of integrationByKey(connection.integration_key)?.dataTypes ?? []) {
        listed.push(dataType);
        if (!wanted.has(dataType)) wanted.set(dataType, newPull(requested, connection, dataType, priority));
      }
    }
    const open = await tx.queueUnlessOpen(linked[0]!.company_id, [...wanted.values()]);
    return listed.map((dataType) => open.get(dataType)!);
  });
}
