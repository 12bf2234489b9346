// One company's pages of a data set, handed out in order, all from one snapshot of it.
//
// The snapshot is the data set's latestSuccessfulSyncId (GET /dataStatus). It is read beside
// the first page, not before it (a round trip less), and again after the last page: the
// same id twice means every page read in between read that snapshot. The first page is
// the exception, since its read may predate the first snapshot read; on a company's first
// page it is therefore read a second time once the id is known, and the two reads must hold
// the same records. Until they are seen to, the page is "unvouched" and the caller keeps it
// out of its checkpoints. (Resumed, the snapshot was seen before the crash, and a page read
// after that cannot come from an older one.) totalResults must also stay the same on every
// page. Any disagreement throws Resynced.
//
// After the first page: by number through a reorder window (page-window.ts) when the
// service pages by number, else link by link with a look-ahead (look-ahead.ts).
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError } from '../../client/errors.js';
import type { CompanyPosition } from './checkpoint.js';
import { LookAhead } from './look-ahead.js';
import type { ReadPage } from './page.js';
import { lastPage, pagesByNumber, PageWindow, type WindowCounters } from './page-window.js';

/** The data set changed under the export (a resync): the company's pages mix snapshots. */
export class Resynced extends Error {}

export interface CompanyPagesSource {
  /** Page `page` by number (through the run's limiter). */
  numbered(page: number, signal?: AbortSignal): Promise<ReadPage>;
  /** The page a `_links.next` names. */
  linked(href: string): Promise<ReadPage>;
  /** The data set's latestSuccessfulSyncId, or undefined when the service does not say. */
  snapshot(): Promise<string | undefined>;
  /** The parameters every page request carries besides `page` (to recognise plain page-number links). */
  sent: Record<string, string | number | undefined>;
  pageSize: number;
  /** Pages the reorder window may hold, given the pages seen so far. */
  windowSize(): number;
  signal: AbortSignal;
}

export class CompanyPages {
  private window: PageWindow | undefined;
  private ahead: LookAhead | undefined;
  private last: number | undefined;
  /** The first page's second read agrees with its first (true when no second read is needed). */
  private vouched: Promise<boolean> | boolean = true;
  private isVouched = true;
  /** The snapshot read again, sent as soon as every page of the window is in (written or not). */
  private snapshotAfter: Promise<string | undefined> | undefined;

  constructor(private readonly source: CompanyPagesSource, private readonly position: CompanyPosition) {}

  /** Is the first page still waiting for its second read to agree? */
  get unvouched(): boolean {
    return !this.isVouched;
  }

  /**
   * The first page to write (pagesDone + 1), with the snapshot read beside it. A failure of
   * the page's own request goes through `failed` (to say why the data set cannot be read).
   */
  async first(failed: (err: unknown) => Promise<unknown>): Promise<ReadPage> {
    const { source, position } = this;
    const fresh = position.pagesDone === 0;
    const number = position.pagesDone + 1;
    const read = source.numbered(number);
    const snapshot = await source.snapshot();
    if (!fresh && position.snapshot !== undefined && snapshot !== position.snapshot) throw new Resynced();
    if (fresh && snapshot !== undefined) position.snapshot = snapshot;
    let page: ReadPage;
    try {
      page = await read;
    } catch (err) {
      throw await failed(err);
    }
    if (fresh && position.snapshot !== undefined && page.meta.next && page.records.count > 0) {
      const digest = page.records.digest();
      this.isVouched = false;
      this.vouched = source.numbered(number).then((again) => again.records.digest() === digest);
      this.vouched.then((same) => {
        this.isVouched = same;
      }, () => undefined);
    }
    this.check(page);
    return page;
  }

  /** The page after page `number` (which was just handed out), requested now or earlier; undefined after the last. */
  following(page: ReadPage, number: number): Promise<ReadPage> | undefined {
    const { meta, records } = page;
    if (!meta.next || records.count === 0 || (this.last !== undefined && number >= this.last)) return undefined;
    if (!this.window && !this.ahead) this.open(page, number);
    const next = this.window ? this.window.take(number + 1) : this.ahead!.next(meta.next, meta);
    const checked = next.then((arrived) => {
      this.check(arrived);
      return arrived;
    });
    checked.catch(() => undefined); // awaited by the caller, or abandoned when an earlier write fails
    return checked;
  }

  /** The page handed out last is written: its place in the window is free. */
  written(): void {
    this.window?.written();
  }

  /** After the last page: throws Resynced unless every page came from the snapshot. */
  async verify(): Promise<void> {
    const { position } = this;
    if (position.pagesDone <= 1 || position.snapshot === undefined) return;
    if ((await (this.snapshotAfter ?? this.snapshotAgain())) !== position.snapshot) throw new Resynced();
  }

  /** Stops what is in flight; returns the window's counters, if there was one. */
  close(): WindowCounters | undefined {
    this.window?.close();
    return this.window?.counters;
  }

  private open(page: ReadPage, number: number): void {
    const { source, position } = this;
    this.last = lastPage(page.meta, source.pageSize);
    if (this.last !== undefined && pagesByNumber(page.meta.next!, number, source.sent)) {
      this.window = new PageWindow(source.numbered, number + 1, this.last, source.windowSize(), source.signal);
      if (position.snapshot !== undefined) {
        this.snapshotAfter = this.window.answered.then(() => this.snapshotAgain());
        this.snapshotAfter.catch(() => undefined); // awaited by verify(), or abandoned with the window
      }
    } else {
      this.last = undefined;
      this.ahead = new LookAhead(source.linked);
    }
  }

  /** The snapshot read again once the first page is vouched for; a first page whose two reads differ gives a value no snapshot id matches. */
  private async snapshotAgain(): Promise<string | undefined> {
    return (await this.vouched) ? this.source.snapshot() : RESYNCED;
  }

  private check(page: ReadPage): void {
    const { position } = this;
    if (position.total === undefined) position.total = page.meta.totalResults;
    else if (page.meta.totalResults !== position.total) throw new Resynced();
  }
}

/** What the snapshot check sees when the first page's two reads differ: never a real snapshot id. */
const RESYNCED = '\u0000resynced';

/** The data set's latestSuccessfulSyncId, or undefined when the service does not say (an error other than being refused). */
export async function readSnapshot(client: ApiClient, companyId: string, dataType: string, signal: AbortSignal): Promise<string | undefined> {
  try {
    const status = await api.dataStatus(client, companyId, signal);
    return status?.[dataType]?.latestSuccessfulSyncId;
  } catch (err) {
    if (err instanceof ApiRequestError && err.status !== 401 && err.status !== 403 && err.status !== 402) return undefined;
    throw err;
  }
}
