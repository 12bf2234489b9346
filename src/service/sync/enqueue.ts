// Queuing pulls: one per (company, data type) at a time. A request for a data set that
// already has an open pull returns that pull instead of queuing another.
import { randomUUID } from 'node:crypto';
import { isoSeconds, type Clock } from '../clock.js';
import { integrationByKey } from '../integrations/registry.js';
import type { ConnectionRow } from '../store/connections.js';
import { reserveGeneration } from '../store/datasets.js';
import type { Db } from '../store/db.js';
import { insertPull, openPull, type PullRow } from '../store/pulls.js';

export function queuePull(db: Db, clock: Clock, connection: ConnectionRow, dataType: string): PullRow {
  return db.transaction(() => {
    const open = openPull(db, connection.company_id, dataType);
    if (open) return open;
    const requested = isoSeconds(clock.now());
    const supported = integrationByKey(connection.integration_key)?.dataTypes.includes(dataType) ?? false;
    const id = randomUUID();
    const generation = reserveGeneration(db, connection.company_id, dataType, id, requested);
    return insertPull(db, {
      id,
      companyId: connection.company_id,
      connectionId: connection.id,
      dataType,
      status: supported ? 'Queued' : 'NotSupported',
      generation,
      requested,
      ...(supported ? {} : { statusDescription: `Datatype ${dataType} is not supported by ${integrationByKey(connection.integration_key)?.name ?? connection.integration_key}` }),
    });
  }).immediate();
}

/**
 * POST /data/all: every supported data type of every Linked connection of the company, in
 * one transaction (each queuePull inside it is a savepoint), so a company costs one commit.
 */
export function queueAll(db: Db, clock: Clock, connections: ConnectionRow[]): PullRow[] {
  return db.transaction(() => {
    const pulls: PullRow[] = [];
    for (const connection of connections) {
      if (connection.status !== 'Linked') continue;
      for (const dataType of integrationByKey(connection.integration_key)?.dataTypes ?? []) {
        pulls.push(queuePull(db, clock, connection, dataType));
      }
    }
    return pulls;
  }).immediate();
}
