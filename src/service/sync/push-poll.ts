// Pending pushes (the platform answered 202): ask the platform how each one ended, and
// time out the ones that waited longer than their timeoutInMinutes.
import { isoSeconds } from '../../lib/clock.js';
import { getConnectionById } from '../store/connections.js';
import { completePush, pendingPushes } from '../store/pushes.js';
import { freshTokens, readTokens } from '../tokens.js';
import type { SyncDeps } from './deps.js';
import { pushFieldsFor } from './push-outcome.js';

const DEFAULT_TIMEOUT_MINUTES = 60;
const BATCH = 50;

export async function pollPendingPushes(deps: SyncDeps): Promise<number> {
  const { db, clock, sealer, adapter } = deps;
  let settled = 0;
  for (const push of pendingPushes(db, BATCH)) {
    const now = clock.now();
    const deadline = Date.parse(push.requested) + (push.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES) * 60_000;
    const connection = getConnectionById(db, push.connection_id);
    const tokens = connection ? readTokens(db, sealer, connection.id) : undefined;
    if (now.getTime() >= deadline || !connection || !tokens || !push.platform_push_id) {
      completePush(db, push.key, { status: 'TimedOut', status_code: 504, completed: isoSeconds(now), error_message: 'The platform did not finish the push in time.' });
      settled += 1;
      continue;
    }
    try {
      const fresh = await freshTokens(db, sealer, adapter, connection, () => isoSeconds(now));
      const outcome = await adapter.pushStatus(connection.integration_key, fresh, push.platform_push_id);
      if (outcome.status === 'Pending') continue;
      const { platform_push_id: _ignored, ...fields } = pushFieldsFor(outcome, push.data_type);
      completePush(db, push.key, { ...fields, completed: isoSeconds(now) });
      settled += 1;
    } catch (err) {
      deps.onError?.(err, `push ${push.key}`);
    }
  }
  return settled;
}
