// `ferry push` as an engine: check that the connection can push, then push a file's
// records one at a time, in file order. The record in flight when the person stops
// finishes (a push cannot be taken back, and an aborted POST leaves its outcome unknown).
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { connectionStatusText, type WireConnection } from '../../client/wire.js';
import { OpError, suggestingError } from '../errors.js';
import { pushOne, type PushResult, type PushTarget } from './push-one.js';
import type { FileRecord } from './records.js';

/** The connection, when it is Linked; else an error saying how to link it. Nothing is pushed either way. */
export async function linkedConnection(client: ApiClient, companyId: string, connectionId: string, signal?: AbortSignal): Promise<WireConnection> {
  const connection = await api.connection<WireConnection>(client, companyId, connectionId, signal);
  if (connection.status === 'Linked') return connection;
  const message = `Connection ${connection.id} (${connection.platformName}) is ${connectionStatusText(connection)}; only a Linked connection can push. Nothing was pushed.`;
  if (connection.status !== 'Deauthorized' && connection.status !== 'PendingAuth') throw new OpError(message, 'failed');
  throw suggestingError(message, 'failed', {
    args: ['connections', 'authorize', '--company', companyId, '--connection', connection.id],
    hint: (command) => `Authorize it: ${command} --tokens-file FILE   # its token fields: ferry integrations get ${connection.integrationKey}`,
  });
}

export interface PushHooks {
  signal: AbortSignal;
  /** Each record's outcome as it is known, in file order. */
  onResult(result: PushResult): void;
}

/** Pushes every record; returns how many were handled and whether the person stopped it. Fatal errors are thrown after the records before them are reported. */
export async function pushRecords(client: ApiClient, target: PushTarget, records: AsyncIterable<FileRecord> | Iterable<FileRecord>, hooks: PushHooks): Promise<{ count: number; interrupted: boolean }> {
  let count = 0;
  for await (const record of records) {
    if (hooks.signal.aborted) return { count, interrupted: true };
    count += 1;
    if (record.problem !== undefined) {
      hooks.onResult({ line: record.line, status: 'Invalid', error: record.problem });
      continue;
    }
    const { result, stop } = await pushOne(client, target, record);
    hooks.onResult(result);
    if (stop) throw stop;
  }
  return { count, interrupted: false };
}
