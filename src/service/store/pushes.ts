// Push operations as both stores keep them, and the list's query fields (SQL in
// sqlite/pushes.ts and pg/pushes.ts).
import type { FieldResolver } from '../query/types.js';

export type PushStatus = 'Pending' | 'Failed' | 'Success' | 'TimedOut';

export type PushChangeType = 'Created' | 'Modified' | 'Deleted';

export interface PushRow {
  seq: number;
  key: string;
  company_id: string;
  connection_id: string;
  data_type: string;
  status: PushStatus;
  status_code: number;
  requested: string;
  completed: string | null;
  timeout_minutes: number | null;
  error_message: string | null;
  validation: string;
  changes: string | null;
  platform_push_id: string | null;
  change_type: PushChangeType;
  /** The record an update or delete names; a create learns its id from the platform. */
  record_id: string | null;
}

export const pushFields: FieldResolver = (path) => {
  switch (path) {
    case 'pushOperationKey': return { sql: 'key', type: 'string' };
    case 'dataConnectionKey': return { sql: 'connection_id', type: 'string' };
    case 'dataType': return { sql: 'data_type', type: 'string' };
    case 'status': return { sql: 'status', type: 'string' };
    case 'statusCode': return { sql: 'status_code', type: 'number' };
    case 'requestedOnUtc': return { sql: 'requested', type: 'date' };
    case 'completedOnUtc': return { sql: 'completed', type: 'date' };
    default: return undefined;
  }
};
