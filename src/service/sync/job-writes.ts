// A job's writes, grouped: the pages and endings its pulls hand in are committed together,
// once ~1,000 records or ~1 s have gathered, or once every pull still running waits on a
// write (nothing more can join). A company of mostly empty data sets costs a commit or two,
// not one per data type. Each group first reads (and on PostgreSQL locks) the company, in
// the order every writer of a company takes its locks. A group that fails is tried again
// one write at a time, so one data type's failure reaches only its own pull.
import type { AsyncStore } from '../store/async-store.js';
import { isDatabaseLost } from '../store/pg/unavailable.js';
import type { CompanyRow } from '../store/companies.js';
import { pullsEnded, type BackgroundEvents, type EndedPull } from './events.js';
import type { HeldJob } from './pull-lease.js';

/** Records gathered before a group commits. */
export const GROUP_RECORDS = 1000;
/** How long a write waits for others at most. */
export const GROUP_MS = 1000;

/** The transaction a write runs in, and its company as the group read it (undefined once deleted). */
export interface GroupTx {
  tx: AsyncStore;
  company: CompanyRow | undefined;
  /** Pulls the group's writes ended: their events are recorded once the writes are done (events.ts pullsEnded). */
  ended: EndedPull[];
}

interface Pending {
  records: number;
  work: (group: GroupTx) => Promise<unknown>;
  settle: (outcome: { value: unknown } | { error: unknown }) => void;
}

export class JobWriter {
  private pending: Pending[] = [];
  private records = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The job's pulls still running: a group commits once each of them waits on it. */
  running = 0;

  constructor(private readonly store: AsyncStore, private readonly events: BackgroundEvents, private readonly job: HeldJob, private readonly companyId: string) {}

  /** `work` in a transaction, with other pulls' writes; settles as `work` does, once committed. */
  write<T>(records: number, work: (group: GroupTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        records, work, settle: (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.value as T)),
      });
      this.records += records;
      this.timer ??= setTimeout(() => this.flush(), GROUP_MS);
      this.check();
    });
  }

  /** A pull ended (or began): commit if all that are left now wait. */
  check(): void {
    if (this.pending.length > 0 && (this.records >= GROUP_RECORDS || this.pending.length >= this.running)) this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.pending;
    this.pending = [];
    this.records = 0;
    if (group.length > 0) void this.job.hold(() => this.commit(group));
  }

  private async commit(group: Pending[]): Promise<void> {
    try {
      const values = await this.transaction(group);
      group.forEach((item, i) => item.settle({ value: values[i] }));
    } catch (err) {
      if (group.length === 1 || isDatabaseLost(err)) {
        for (const item of group) item.settle({ error: err });
        return;
      }
      for (const item of group) {
        try {
          item.settle({ value: (await this.transaction([item]))[0] });
        } catch (one) {
          item.settle({ error: one });
        }
      }
    }
  }

  private transaction(group: Pending[]): Promise<unknown[]> {
    return this.store.transaction(async (tx) => {
      const written: GroupTx = { tx, company: await tx.getCompany(this.companyId), ended: [] };
      const values: unknown[] = [];
      for (const item of group) values.push(await item.work(written));
      if (written.ended.length > 0) await pullsEnded(this.events, written.ended);
      return values;
    });
  }
}
