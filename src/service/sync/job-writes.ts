// A job's writes, grouped: the pages and endings its pulls hand in are committed together,
// once ~1,000 records or ~1 s have gathered, or once every pull still running waits on a
// write (nothing more can join). Each write describes what it writes (the pull's new state,
// a page of records and the fields they showed, a generation to publish), so a group costs
// one statement of each kind, not one per data type: a company of mostly empty data sets
// costs a commit or two and a dozen statements. Each group first reads (and on PostgreSQL
// locks) the company, then writes the pulls, records, fields, data sets and last syncs, in
// the order every writer of a company takes its locks. The pulls' state is written only
// where the job's lease is still theirs, and a pull another worker took over writes nothing
// else (LeaseLost). A group that fails is tried again one write at a time, so one data
// type's failure reaches only its own pull.
import type { FieldType } from '../query/types.js';
import type { AsyncStore } from '../store/async-store.js';
import type { RecordInput } from '../store/datasets.js';
import { isDatabaseLost } from '../store/pg/unavailable.js';
import type { PullFields, PullJob, PullRow } from '../store/pulls.js';
import { pullsEnded, type BackgroundEvents } from './events.js';
import { fieldsRemembered, unknownFields } from './known-fields.js';
import { LeaseLost, type HeldJob, type HeldPull } from './pull-lease.js';

/** Records gathered before a group commits. */
export const GROUP_RECORDS = 1000;
/** How long a write waits for others at most. */
export const GROUP_MS = 1000;

/** One write of a pull: its new state, and what goes with it. */
export interface PullWrite {
  pull: PullRow;
  held: HeldPull;
  /** The pull's new state, written only while the job's lease is still the pull's. */
  change: PullFields;
  /** A page of records into the pull's generation, and the fields they showed; `fresh`: the generation's first (RecordBatch.fresh). */
  page?: { connectionId: string; rows: RecordInput[]; fields: Map<string, FieldType>; fresh: boolean };
  /** The pull completed: its generation is published; `records` is its count when known without a read (this page holds them all). */
  publish?: { connectionId: string; completed: string; records?: number };
  /** The pull ended: its event is recorded with the group's. */
  ends?: boolean;
  /** What else its transaction records once the pulls' states are written (a revoked grant). */
  also?: () => Promise<void>;
}

/** What a write answers: the pull as written and, when it published a generation, the one that replaced. */
export interface Written {
  pull: PullRow;
  replaced: number | null;
}

type Outcome = { value: Written } | { error: unknown };

/**
 * Claims the worker's next job inside the job's last transaction, so its lease commits with
 * the job's end (one commit where there were two); undefined when the worker takes none now.
 */
export type ClaimNext = (tx: AsyncStore) => Promise<PullJob | undefined>;

interface Pending {
  write: PullWrite;
  settle: (outcome: Outcome) => void;
}

export class JobWriter {
  private pending: Pending[] = [];
  private records = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The job's pulls still running: a group commits once each of them waits on it. */
  running = 0;
  /** The next job, claimed in this job's last transaction (claimNext) and committed with it. */
  claimed: PullJob | undefined;

  constructor(private readonly store: AsyncStore, private readonly events: BackgroundEvents, private readonly job: HeldJob, private readonly companyId: string,
    private readonly claimNext?: ClaimNext) {}

  /** `write` in a transaction, with other pulls' writes; settles once committed (LeaseLost when the pull is no longer this worker's). */
  write(write: PullWrite): Promise<Written> {
    return new Promise<Written>((resolve, reject) => {
      this.pending.push({ write, settle: (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.value)) });
      this.records += write.page?.rows.length ?? 0;
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
      const outcomes = await this.transaction(group.map((item) => item.write), true);
      group.forEach((item, i) => item.settle(outcomes[i]!));
    } catch (err) {
      // Alone, each write fails only its own pull; a lone write is tried again only where its
      // page was taken for a fresh generation's (a unique violation if it was not one).
      if (isDatabaseLost(err) || (group.length === 1 && !group[0]!.write.page?.fresh)) {
        for (const item of group) item.settle({ error: err });
        return;
      }
      for (const item of group) {
        try {
          item.settle((await this.transaction([item.write], false))[0]!);
        } catch (one) {
          item.settle({ error: one });
        }
      }
    }
  }

  /**
   * Whether `writes` end every pull still running: the job's last transaction. Each pull
   * waits on one write at a time, so a group holds at most one of each.
   */
  private last(writes: PullWrite[]): boolean {
    return writes.length >= this.running && writes.every(({ ends, change }) => ends || change.lease_until === null);
  }

  /**
   * The writes in one transaction; a pull whose lease is gone answers LeaseLost, and nothing
   * of it is written. The first try (`first`; not a write tried again alone) writes fresh
   * generations' pages without the conflict check, and the job's last also claims the
   * worker's next job.
   */
  private async transaction(writes: PullWrite[], first: boolean): Promise<Outcome[]> {
    let next: PullJob | undefined;
    let fields: Map<string, Map<string, FieldType>> = new Map();
    const outcomes = await this.store.transaction(async (tx) => {
      next = undefined;
      const company = await tx.getCompany(this.companyId);
      const live = writes.filter(({ held }) => !held.lost);
      const written = new Map((await tx.updatePulls(live.map(({ pull, change }) => ({ id: pull.id, fields: change })), this.job.lease)).map((row) => [row.id, row]));
      const held = live.filter(({ pull }) => written.has(pull.id));
      await tx.writeRecords(held.flatMap(({ pull, page }) => (page && page.rows.length > 0
        ? [{ companyId: pull.company_id, dataType: pull.data_type, generation: pull.generation, connectionId: page.connectionId, rows: page.rows, fresh: first && page.fresh }]
        : [])));
      fields = unknownFields(this.store, new Map(held.flatMap(({ pull, page }) => (page && page.fields.size > 0 ? [[pull.data_type, page.fields] as const] : []))));
      await tx.rememberAllFields(fields);
      const published = held.filter(({ publish }) => publish);
      const replaced = published.length === 0 ? [] : await tx.completeGenerations(this.companyId, published.map(({ pull, publish }) => ({
        dataType: pull.data_type, generation: pull.generation, syncId: pull.id, connectionId: publish!.connectionId, completed: publish!.completed,
      })));
      for (const { also } of held) await also?.();
      const ended = [];
      for (const { pull, ends, publish } of held) {
        if (!ends || !company) continue;
        const records = publish ? publish.records ?? await tx.countRecords(pull.company_id, pull.data_type, pull.generation) : null;
        ended.push({ pull: written.get(pull.id)!, company, records });
      }
      // Pulls of the job that do not end here still run, so are open: read.completed cannot be due.
      if (ended.length > 0) await pullsEnded(this.events, ended, this.running > ended.length);
      if (first && this.claimNext && !this.claimed && this.last(writes)) next = await this.claimNext(tx);
      return writes.map(({ pull }): Outcome => {
        const row = written.get(pull.id);
        if (!row) return { error: new LeaseLost(pull.id) };
        const at = published.findIndex((write) => write.pull.id === pull.id);
        return { value: { pull: row, replaced: at < 0 ? null : replaced[at] ?? null } };
      });
    });
    if (next) this.claimed = next;
    fieldsRemembered(this.store, fields);
    // Known once committed: a pull whose lease was gone is another worker's; one ended or waiting to retry is nobody's.
    writes.forEach(({ held, change, ends }, i) => {
      if (!('value' in outcomes[i]!)) held.lose();
      else if (ends || change.lease_until === null) held.released();
    });
    return outcomes;
  }
}
