// Wire records for pull operations, data status and push operations; fields with no value
// are left out (compact.ts).
import type { DatasetRow } from '../store/datasets.js';
import { isErrored, isFinished } from '../store/pull-status.js';
import type { PullRow } from '../store/pulls.js';
import type { PushRow } from '../store/pushes.js';
import { compact } from './compact.js';

export function pullRecord(row: PullRow): Record<string, unknown> {
  return compact({
    id: row.id,
    companyId: row.company_id,
    connectionId: row.connection_id,
    dataType: row.data_type,
    status: row.status,
    statusDescription: row.status_description,
    errorMessage: row.error_message,
    requested: row.requested,
    completed: row.completed,
    progress: row.progress,
    isCompleted: isFinished(row.status),
    isErrored: isErrored(row.status),
  });
}

/**
 * A data set's status: its latest pull's, and its last success. The data set is read before
 * its latest pull, and a worker may commit in between: a pull read Complete that the data set
 * read does not show yet was made its last success by that commit.
 */
export function dataStatusRecord(dataset: DatasetRow, latest: Pick<PullRow, 'id' | 'status' | 'completed'> | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = { dataType: dataset.data_type, currentStatus: latest?.status ?? 'Initial' };
  const endedNow = latest?.status === 'Complete' && latest.id === dataset.latest_sync_id;
  const success = endedNow ? { at: latest.completed, id: latest.id } : { at: dataset.last_successful_sync, id: dataset.latest_successful_sync_id };
  if (success.at) record.lastSuccessfulSync = success.at;
  if (dataset.latest_sync_id) record.latestSyncId = dataset.latest_sync_id;
  if (success.id) record.latestSuccessfulSyncId = success.id;
  return record;
}

export function pushRecord(row: PushRow): Record<string, unknown> {
  return compact({
    pushOperationKey: row.key,
    companyId: row.company_id,
    dataConnectionKey: row.connection_id,
    dataType: row.data_type,
    status: row.status,
    statusCode: row.status_code,
    requestedOnUtc: row.requested,
    completedOnUtc: row.completed,
    timeoutInMinutes: row.timeout_minutes,
    errorMessage: row.error_message,
    validation: JSON.parse(row.validation),
    changes: row.changes ? (JSON.parse(row.changes) as Array<Record<string, unknown>>).map(compact) : undefined,
  });
}
