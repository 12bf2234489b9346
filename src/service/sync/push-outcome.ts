// Maps a platform's answer to a push onto the push operation's fields.
import type { PushOutcome } from '../adapters/adapter.js';
import type { PushChangeType, PushRow } from '../store/pushes.js';

export type PushFields = Pick<PushRow, 'status' | 'status_code'> & Partial<Pick<PushRow, 'error_message' | 'validation' | 'changes' | 'platform_push_id'>>;

/** What the push did: its change type, and the record it names (an update's or delete's own id). */
export interface PushTarget {
  dataType: string;
  changeType: PushChangeType;
  recordId?: string | null;
}

export function pushFieldsFor(outcome: PushOutcome, target: PushTarget): PushFields {
  switch (outcome.status) {
    case 'Success': {
      const id = target.recordId ?? String(outcome.record.id ?? '');
      return {
        status: 'Success',
        status_code: 200,
        changes: JSON.stringify([{ type: target.changeType, recordRef: { id, dataType: target.dataType }, attachmentId: null }]),
      };
    }
    case 'Pending':
      return { status: 'Pending', status_code: 202, platform_push_id: outcome.platformPushId };
    case 'Failed':
      return {
        status: 'Failed',
        status_code: outcome.statusCode,
        error_message: outcome.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ') || 'The platform rejected the record.',
        validation: JSON.stringify({
          errors: outcome.errors.map((e) => ({ ...(e.field ? { itemId: e.field } : {}), message: e.message, validatorName: 'Platform' })),
          warnings: [],
        }),
      };
  }
}
