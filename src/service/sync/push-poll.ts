// Pending pushes (the platform answered 202): ask the platform how each one ended, and
// time out the ones that waited longer than their timeoutInMinutes.
import { isoSeconds } from '../../lib/clock.js';
import { freshTokens, readTokens } from '../tokens.js';
import type { SyncDeps } from './deps.js';
import { backgroundEvents, pushEnded } from './events.js';
import { pushFieldsFor } from './push-outcome.js';

const DEFAULT_TIMEOUT_MINUTES = 60;
const BATCH = 50;

export async function pollPendingPushes(deps: SyncDeps): Promise<number> {
  const { store, clock, sealer, adapter } = deps;
  let settled = 0;
  /**
   * The push's outcome and its write event, in one transaction; true when settled here.
   * Every worker polls the pending pushes: only the one whose write settled it says so.
   */
  const settle = (key: string, fields: Parameters<typeof store.completePush>[1]) => store.transaction(async (tx) => {
    if (!(await tx.completePush(key, fields))) return false;
    const push = await tx.getPush(key);
    if (push) await pushEnded(backgroundEvents(deps), push);
    return true;
  }).then((settledHere) => {
    if (settledHere) deps.signals?.pushRecorded(fields.status);
    return settledHere;
  });
  for (const push of await store.pendingPushes(BATCH)) {
    const now = clock.now();
    const deadline = Date.parse(push.requested) + (push.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES) * 60_000;
    const connection = await store.getConnectionById(push.connection_id);
    const tokens = connection ? await readTokens(store, sealer, connection.id) : undefined;
    if (now.getTime() >= deadline || !connection || !tokens || !push.platform_push_id) {
      if (await settle(push.key, { status: 'TimedOut', status_code: 504, completed: isoSeconds(now), error_message: 'The platform did not finish the push in time.' })) settled += 1;
      continue;
    }
    try {
      const fresh = await freshTokens(store, sealer, adapter, connection, () => isoSeconds(now));
      const outcome = await adapter.pushStatus(connection.integration_key, fresh, push.platform_push_id);
      if (outcome.status === 'Pending') continue;
      const { platform_push_id: _ignored, ...fields } = pushFieldsFor(outcome, { dataType: push.data_type, changeType: push.change_type, recordId: push.record_id });
      if (await settle(push.key, { ...fields, completed: isoSeconds(now) })) settled += 1;
    } catch (err) {
      deps.onError?.(err, `push ${push.key}`);
    }
  }
  return settled;
}
