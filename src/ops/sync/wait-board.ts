// What a wait over many companies knows at each round, kept up to date company by company:
// which companies are unfinished, how many data types are complete or failed, and which
// companies finished since it was last asked. A round reads only the companies an event
// named, so counting every company's data types again after each round made a wait over
// n companies cost n² (at 10,000, it kept the thread busy through the whole sync).
import { isFailed as isFailedStatus, isRunning as isRunningStatus } from '../../client/wire.js';
import type { CompanyRun } from './runs.js';

interface Counted {
  complete: number;
  failed: number;
  /** The company could not be started or followed. */
  error: number;
}

export class WaitBoard {
  /** Started companies with a data type still queued or running (and no error). */
  private readonly open = new Set<CompanyRun>();
  private readonly byId = new Map<string, CompanyRun[]>();
  private readonly counted = new Map<CompanyRun, Counted>();
  /** Companies whose pulls have all ended, not yet taken by `finished()`. */
  private ended: CompanyRun[] = [];
  private readonly total: Counted = { complete: 0, failed: 0, error: 0 };
  /** Data types followed, of the started companies. */
  readonly types: number;

  constructor(private readonly runs: CompanyRun[]) {
    let types = 0;
    for (const run of runs) {
      this.byId.set(run.companyId, [...(this.byId.get(run.companyId) ?? []), run]);
      if (run.started) types += run.dataTypes.size;
      this.count(run, true);
    }
    this.types = types;
  }

  /** Unfinished companies. */
  get pending(): number {
    return this.open.size;
  }

  /** The unfinished companies, or those of them with one of these ids. */
  unfinished(ids?: Set<string>): CompanyRun[] {
    if (!ids) return [...this.open];
    return [...ids].flatMap((id) => this.byId.get(id) ?? []).filter((run) => this.open.has(run));
  }

  /** Whether the company is one still waited for. */
  waitsFor(companyId: string): boolean {
    return (this.byId.get(companyId) ?? []).some((run) => this.open.has(run));
  }

  /** The company was read again: its counts, and whether it is unfinished, follow what was read. */
  update(run: CompanyRun): void {
    this.count(run, false);
  }

  /** Started companies whose pulls have all ended (whatever their state) since the last call; each once. */
  finished(): CompanyRun[] {
    const ended = this.ended;
    this.ended = [];
    return ended;
  }

  /** Companies done, data types complete, errors (failed data types and companies not started or followed). */
  counts(): { done: number; complete: number; errors: number } {
    return { done: this.runs.length - this.open.size, complete: this.total.complete, errors: this.total.failed + this.total.error };
  }

  private count(run: CompanyRun, initial: boolean): void {
    const before = this.counted.get(run);
    const now: Counted = { complete: 0, failed: 0, error: run.error ? 1 : 0 };
    let running = false;
    if (run.started) {
      for (const tracked of run.dataTypes.values()) {
        if (tracked.status === 'Complete') now.complete += 1;
        if (isFailedStatus(tracked.status)) now.failed += 1;
        if (isRunningStatus(tracked.status)) running = true;
      }
    }
    for (const key of ['complete', 'failed', 'error'] as const) this.total[key] += now[key] - (before?.[key] ?? 0);
    this.counted.set(run, now);
    const wasOpen = this.open.has(run);
    const isOpen = run.started && !run.error && running;
    if (isOpen) this.open.add(run);
    else this.open.delete(run);
    // A company that disappeared while waited for did not finish.
    if (!isOpen && run.started && !run.error && (initial || wasOpen)) this.ended.push(run);
  }
}
