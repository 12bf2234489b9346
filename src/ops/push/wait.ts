// Waiting for Pending push operations to settle (Success, Failed or TimedOut). Stopping
// the wait cancels nothing: the platform settles them later.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { describeError, isFatal } from '../../client/errors.js';
import { pollUntil } from '../../client/poll.js';
import { eventPushKey } from '../../client/wait-for-change.js';
import type { ChangeEvent, ChangeFeed } from '../../client/change-feed.js';
import type { StartProgress } from '../progress.js';
import { withOutcome, type PushResult } from './push-one.js';

const CONCURRENCY = 8;

export interface WaitDeps {
  signal: AbortSignal;
  log(line: string): void;
  progress: StartProgress;
  deadline: number;
  firstDelayMs: number;
  onSettled(result: PushResult): void;
  /** The run's event feed (writeEvents of the data type): an operation is read again as soon as it settles. */
  changes?: ChangeFeed;
  /** The feed's mark from before the records were pushed. */
  since?: number;
}

export async function waitForPending(client: ApiClient, companyId: string, results: PushResult[], deps: WaitDeps): Promise<'interrupted' | 'timeout' | undefined> {
  const { signal, deadline } = deps;
  const pending = () => results.filter((r) => r.status === 'Pending');
  if (pending().length === 0) return undefined;
  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(CONCURRENCY);
  const progress = await deps.progress(`Waiting for ${pending().length} pending push operations…`);
  const warned = new Set<string>();
  try {
    const wake = deps.changes && {
      feed: deps.changes,
      relevant: (event: ChangeEvent) => pending().some((r) => r.pushOperationKey === eventPushKey(event)),
      ...(deps.since !== undefined ? { since: deps.since } : {}),
    };
    await pollUntil({ signal, deadline, firstDelayMs: deps.firstDelayMs, done: () => pending().length === 0, ...(wake ? { wake } : {}), round: async (changed?: ChangeEvent[]) => {
      // Woken by events: only the operations they name; on schedule: every pending one.
      const named = changed ? new Set(changed.map(eventPushKey)) : undefined;
      await Promise.all(pending().filter((r) => !named || named.has(r.pushOperationKey)).map((result) => limit(async () => {
        try {
          const push = await api.pushOperation(client, companyId, result.pushOperationKey!, signal);
          if (push.status === 'Pending') return;
          withOutcome(result, push);
          deps.onSettled(result);
        } catch (err) {
          if (signal.aborted) return;
          if (isFatal(err)) throw err;
          if (!warned.has(result.pushOperationKey!)) {
            warned.add(result.pushOperationKey!);
            deps.log(`line ${result.line}: could not read push operation ${result.pushOperationKey} (${describeError(err)}); still trying.`);
          }
        }
      })));
      progress.update(`Waiting for ${pending().length} pending push operation${pending().length === 1 ? '' : 's'}…`);
    } });
  } catch (err) {
    progress.fail();
    throw err;
  }
  if (signal.aborted) {
    progress.fail('Stopped waiting.');
    return 'interrupted';
  }
  if (pending().length > 0) {
    progress.fail('Timed out.');
    return 'timeout';
  }
  progress.done('Every push operation has settled.');
  return undefined;
}
