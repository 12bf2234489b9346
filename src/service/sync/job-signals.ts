// The signals of a job's pulls, told once the job has ended: each pull's outcome, for the
// metrics and the log. Nothing is done for quiet signals (no metrics, no log).
import type { PullRow } from '../store/pulls.js';
import { quietSignals } from '../observability/signals.js';
import type { SyncDeps } from './deps.js';
import type { PullOutcome } from './run-pull.js';

export function jobSignals(deps: SyncDeps, ran: Array<{ pull: PullRow; outcome: PullOutcome }>): void {
  const { signals } = deps;
  if (!signals || signals === quietSignals) return;
  const now = deps.clock.now().getTime();
  for (const { pull, outcome } of ran) {
    const sinceRequested = (now - Date.parse(pull.requested)) / 1000;
    signals.pullRan({ pullId: pull.id, companyId: pull.company_id, dataType: pull.data_type, outcome, sinceRequested });
  }
}
