// One record pushed, and what became of it. A push POST is not idempotent, so a record
// whose outcome is unclear is reported, never resent.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError, ConnectionError, describeError, isFatal } from '../../client/errors.js';
import type { PushOperation, ValidationItem } from '../../client/wire.js';
import type { FileRecord } from './records.js';

export interface PushTarget {
  companyId: string;
  connectionId: string;
  /** The data type's key (`invoices`). */
  dataType: string;
}

/**
 * One record's outcome. Success, Failed, Pending and TimedOut are the push operation's
 * status; Rejected: the service refused the record (400) and created no push operation;
 * Invalid: the file's record is not a JSON object, nothing was sent; Error: the request
 * failed in a way that leaves the outcome unknown (check the push list before resending).
 */
export interface PushResult {
  /** Line of the file where the record starts (1-based). */
  line: number;
  status: 'Success' | 'Failed' | 'Pending' | 'TimedOut' | 'Rejected' | 'Invalid' | 'Error';
  pushOperationKey?: string;
  /** The push operation's statusCode, or the HTTP status of a rejection. */
  statusCode?: number;
  error?: string;
  validation?: ValidationItem[];
  correlationId?: string;
}

export const FAILED = new Set<PushResult['status']>(['Failed', 'TimedOut', 'Rejected', 'Invalid', 'Error']);
/**
 * One POST. A 400 is this record's rejection; 401/402/403/404 are the run's (thrown); a
 * 5xx or a broken connection leaves the outcome unknown: an Error result, and a broken
 * connection also stops the run (`stop`) once its line is recorded.
 */
export async function pushOne(client: ApiClient, target: PushTarget, record: FileRecord): Promise<{ result: PushResult; stop?: unknown }> {
  try {
    const push = await api.push(client, target.companyId, target.connectionId, target.dataType, record.value);
    const result: PushResult = { line: record.line, status: push.status, pushOperationKey: push.pushOperationKey, statusCode: push.statusCode };
    return { result: withOutcome(result, push) };
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 400) {
      const result: PushResult = { line: record.line, status: 'Rejected', statusCode: 400, error: err.message };
      if (err.validation.length) result.validation = err.validation;
      if (err.correlationId) result.correlationId = err.correlationId;
      return { result };
    }
    if (err instanceof ApiRequestError && (isFatal(err) || err.status === 404)) throw err;
    // After its own retries the client gives up on 429/503 only when the service never acted.
    const notCreated = err instanceof ApiRequestError && (err.status === 429 || err.status === 503);
    const result: PushResult = {
      line: record.line,
      status: 'Error',
      error: `${describeError(err)}; ${notCreated ? 'the service did not create it' : 'the push may or may not have been created, so it was not resent'}`,
    };
    if (err instanceof ApiRequestError) {
      result.statusCode = err.status;
      if (err.correlationId) result.correlationId = err.correlationId;
    }
    return err instanceof ConnectionError ? { result, stop: err } : { result };
  }
}

export function withOutcome(result: PushResult, push: PushOperation): PushResult {
  result.status = push.status;
  result.statusCode = push.statusCode;
  if (push.errorMessage) result.error = push.errorMessage;
  else delete result.error;
  if (push.validation?.errors?.length) result.validation = push.validation.errors;
  return result;
}
