// The export engine: every record of a data set, page by page, into one document, in
// constant memory. The first page says how many pages there are; the others are requested
// several at once by page number, through the adaptive limiter, and written strictly in
// order from a bounded reorder window (page-window.ts). A service whose links are not plain
// page numbers is followed link by link with two pages requested ahead (look-ahead.ts).
//
// Consistency: a data set is served from its last complete sync (a snapshot), and pages
// are offsets into it, so a resync that completes in the middle of an export would shift
// the pages (records repeated or missing). Each company's pages are therefore checked to
// come from one snapshot (company-pages.ts). If the data
// set changed, a file export starts that company again from its first page (the part file
// is cut back to where the company began; at most MAX_RESTARTS times), and a stdout export,
// which cannot take back what it wrote, fails. Each company's records thus come from one
// snapshot; different companies' snapshots are naturally taken at different times.
import * as api from '../../client/api.js';
import { AdaptiveLimit } from '../../client/adaptive-limit.js';
import { ApiRequestError } from '../../client/errors.js';
import { inputError, interrupted as interruption, OpError, suggestingError } from '../errors.js';
import { BookmarkTracker, bookmarkTime, incrementalQuery, loadState, saveBookmarks, StateFileError, type Bookmark, type StateFile } from './bookmark.js';
import {
  acquireLock, appendJournal, partPaths, readCompanies, readJournal, releaseLock, removeParts,
  saveCheckpoint, saveCompanies, type Checkpoint, type CompanyPosition, type ExportArgs, type ListedCompany, type PartPaths,
} from './checkpoint.js';
import { CompanyPages, readSnapshot, Resynced } from './company-pages.js';
import { toPage } from './look-ahead.js';
import { bodyBytes, type ReadPage } from './page.js';
import { FIRST_PAGES_IN_FLIGHT, PAGES_IN_FLIGHT, windowFor, type WindowCounters } from './page-window.js';
import { findResumePoint } from './resume.js';
import { MAX_RESTARTS, type ExportEnv, type ExportPlan, type ExportSummary, type SkippedCompany } from './types.js';
import { DataSetUnavailable, skipMessage, unavailable, unavailableError } from './unavailable.js';
import { createEncoder, PartFile, StreamSink, type Encoder, type Sink } from './writers.js';
import { failedWords, stoppedWords } from './stop-words.js';
import { formatCount } from '../progress.js';
import { recordColumns } from '../../platforms/record-columns.js';


/**
 * While pages stream in, the checkpoint is replaced at most this often (each is a file
 * write and a rename, a real share of a fast export's time); a crash costs the pages
 * since, which --resume fetches again.
 */
const CHECKPOINT_EVERY_MS = 250;

interface CompanyOutcome {
  records: number;
  bookmark: BookmarkTracker;
}

export async function runExportPlan(plan: ExportPlan, env: ExportEnv): Promise<ExportSummary> {
  let state: { state: StateFile; digest: string } | undefined;
  try {
    state = plan.statePath ? loadState(plan.statePath) : undefined;
  } catch (err) {
    if (err instanceof StateFileError) throw inputError(err.message, 'Point --state at the file an earlier ferry export wrote, or at a new path.');
    throw err;
  }
  const args: ExportArgs = {
    dataType: plan.dataType,
    scope: plan.allCompanies ? '*' : (plan.companyId as string),
    query: plan.query ?? null,
    orderBy: plan.orderBy ?? null,
    pageSize: plan.pageSize,
    format: plan.format,
    state: state?.digest ?? 'none',
  };
  if (!plan.out) return new Run(plan, env, args, state, undefined).execute(undefined);

  const paths = partPaths(plan.out);
  const lock = acquireLock(paths);
  if (!lock.ok) {
    throw new OpError(`Another ferry export (pid ${lock.pid}) is writing ${plan.out}.`, 'failed', 'Wait for it to finish, or choose another --out.');
  }
  try {
    const resumeFrom = findResumePoint(plan, paths, args, env);
    return await new Run(plan, env, args, state, paths).execute(resumeFrom);
  } finally {
    releaseLock(paths);
  }
}


class Run {
  private encoder!: Encoder;
  private sink!: Sink;
  private file: PartFile | undefined;
  private records = 0;
  private resumedRecords = 0;
  private extraRows = 0;
  private restarts = 0;
  private companies: ListedCompany[] = [];
  private readonly started = Date.now();
  private readonly previous: Record<string, Bookmark>;
  private readonly newBookmarks = new Map<string, Bookmark>();
  private readonly skipped = new Map<string, SkippedCompany>();
  private exported = 0;
  private wroteAnyPage = false;
  private position: CompanyPosition | undefined;
  private startedAt = new Date().toISOString();
  private readonly limit: AdaptiveLimit;
  private readonly pages = { requested: 0, window: 0, peakWindow: 0 };
  private lastCheckpointAt = 0;
  /** A page is being encoded and written: the encoder is ahead of the bytes until it is done. */
  private writing = false;
  /** The company being read: while its first page is unvouched (company-pages.ts), checkpoints wait. */
  private pagesInFlight: CompanyPages | undefined;

  constructor(
    private readonly plan: ExportPlan,
    private readonly env: ExportEnv,
    private readonly args: ExportArgs,
    private readonly state: { state: StateFile; digest: string } | undefined,
    private readonly paths: PartPaths | undefined,
  ) {
    this.previous = state?.state.bookmarks[plan.dataType] ?? {};
    this.limit = env.limit ?? new AdaptiveLimit({
      initial: FIRST_PAGES_IN_FLIGHT,
      max: PAGES_IN_FLIGHT,
      ...(plan.concurrency !== undefined ? { pinned: plan.concurrency } : {}),
      ...(plan.maxRate !== undefined ? { maxRate: plan.maxRate } : {}),
    });
  }

  async execute(resumeFrom: Checkpoint | undefined): Promise<ExportSummary> {
    const { plan, paths } = this;
    const withCompany = plan.allCompanies;
    // Every request of the run (pages, snapshot reads, the company list) through the limit: its rate cap, and what 429s teach.
    const detach = this.limit.attach(this.env.client);
    try {
      if (paths) {
        this.file = await PartFile.open(paths.part, resumeFrom?.bytes ?? 0);
        this.sink = this.file;
      } else {
        this.sink = new StreamSink(this.env.stream);
      }
      this.encoder = createEncoder(plan.format, withCompany, resumeFrom?.encoder, plan.csvEscape ?? true, recordColumns(plan.dataType));
      if (resumeFrom) {
        this.startedAt = resumeFrom.startedAt;
        this.records = this.resumedRecords = resumeFrom.records;
        this.wroteAnyPage = true;
        this.companies = plan.allCompanies ? (readCompanies(paths!) ?? []) : [{ id: plan.companyId!, name: '' }];
        this.replayJournal(resumeFrom.company.index);
        this.env.note(`Resuming the export to ${plan.out} at ${formatCount(resumeFrom.records)} records` +
          `${plan.allCompanies ? ` (company ${resumeFrom.company.index + 1} of ${this.companies.length})` : ''}.`);
      } else {
        this.companies = plan.allCompanies ? await this.listCompanies() : [{ id: plan.companyId!, name: '' }];
        if (paths && plan.allCompanies) saveCompanies(paths, this.companies);
        await this.sink.write(this.encoder.start());
      }

      const first = resumeFrom?.company.index ?? 0;
      for (let index = first; index < this.companies.length; index++) {
        const company = this.companies[index]!;
        this.position = index === first && resumeFrom ? resumeFrom.company : this.freshPosition(index, company.id);
        this.saveCheckpoint();
        try {
          const outcome = await this.exportCompany(company, index);
          this.exported += 1;
          const bookmark = outcome.bookmark.result(bookmarkTime());
          if (bookmark) this.newBookmarks.set(company.id, bookmark);
          if (paths && plan.allCompanies) appendJournal(paths, { companyId: company.id, outcome: 'exported', records: outcome.records, bookmark: outcome.bookmark.state() });
        } catch (err) {
          if (!(err instanceof DataSetUnavailable) || !plan.allCompanies) throw err;
          const skipped = { ...err.skipped, name: company.name };
          this.skipped.set(company.id, skipped);
          // No line per company (thousands of them): the command sums the skips up at the end.
          if (paths) appendJournal(paths, { companyId: company.id, outcome: 'skipped', status: skipped.status, reason: skipped.reason, name: company.name });
        }
      }
      this.position = undefined;
      await this.sink.write(this.encoder.finish());
      if (this.file && paths) {
        await this.file.commit(plan.out!, plan.force);
        this.file = undefined;
        removeParts(paths);
      }
      const statePath = this.plan.statePath ? saveBookmarks(this.plan.statePath, this.plan.dataType, this.newBookmarks) : null;
      return this.summary(resumeFrom !== undefined, statePath);
    } catch (err) {
      throw this.failure(err);
    } finally {
      detach();
      await this.file?.close();
    }
  }

  /** Turns an abort into an interruption, and says where a partial export stays. */
  private failure(err: unknown): unknown {
    const { paths, plan } = this;
    const interrupted = this.env.signal.aborted;
    const kept = paths !== undefined && this.wroteAnyPage;
    if (paths && !kept) removeParts(paths);
    // Stopped between pages: the checkpoint catches up with every page written.
    if (kept && !this.writing && !this.pagesInFlight?.unvouched) this.saveCheckpoint();
    if (interrupted) return interruption(stoppedWords(this.records, plan.out, kept));
    if (err instanceof OpError && err.kind === 'input') return err;
    if (err instanceof DataSetUnavailable) return unavailableError(err);
    if (kept) this.env.note(failedWords(this.records, plan.out!));
    return err;
  }

  private async listCompanies(): Promise<ListedCompany[]> {
    const companies: ListedCompany[] = [];
    for await (const page of api.companyPages<{ id: string; name: string }>(this.env.client, { pageSize: api.MAX_PAGE_SIZE }, this.env.signal)) {
      for (const c of page.results) companies.push({ id: c.id, name: c.name });
    }
    return companies;
  }

  private replayJournal(currentIndex: number): void {
    const journal = this.paths ? readJournal(this.paths) : new Map();
    for (let i = 0; i < currentIndex; i++) {
      const company = this.companies[i]!;
      const entry = journal.get(company.id);
      if (entry?.outcome === 'skipped') {
        this.skipped.set(company.id, { companyId: company.id, name: company.name, status: entry.status, reason: entry.reason as SkippedCompany['reason'], message: skipMessage(entry.reason, entry.status, this.plan.dataType) });
      } else if (entry?.outcome === 'exported') {
        this.exported += 1;
        const bookmark = new BookmarkTracker(this.previous[company.id], entry.bookmark).result(bookmarkTime());
        if (bookmark) this.newBookmarks.set(company.id, bookmark);
      }
    }
  }

  private freshPosition(index: number, id: string): CompanyPosition {
    return { index, id, pagesDone: 0, startBytes: this.sink.bytes, startRecords: this.records, startEncoder: this.encoder.state(), bookmark: {} };
  }

  /** Saves where the export stands; `whenDue` only if the last save is CHECKPOINT_EVERY_MS old. */
  private saveCheckpoint(whenDue = false): void {
    if (!this.paths || !this.position) return;
    const now = Date.now();
    if (whenDue && now - this.lastCheckpointAt < CHECKPOINT_EVERY_MS) return;
    this.lastCheckpointAt = now;
    saveCheckpoint(this.paths, {
      version: 1,
      args: this.args,
      startedAt: this.startedAt,
      bytes: this.sink.bytes,
      records: this.records,
      encoder: this.encoder.state(),
      companies: this.companies.length,
      company: this.position,
    });
  }

  /** One company's records; starts the company again when its data set is resynced meanwhile. */
  private async exportCompany(company: ListedCompany, index: number): Promise<CompanyOutcome> {
    for (let restarts = 0; ; restarts++) {
      try {
        return await this.exportSnapshot(company, index);
      } catch (err) {
        if (!(err instanceof Resynced)) throw err;
        const what = `The ${this.plan.dataType} data set of company ${company.id} was resynced while it was being exported`;
        if (!this.file) {
          throw new OpError(`${what}, so the output mixes two snapshots (records may be missing or repeated).`, 'failed',
            'Run the export again, or export to a file with --out, which starts such a company again by itself.');
        }
        if (restarts >= MAX_RESTARTS) {
          throw suggestingError(`${what}, again and again.`, 'failed', {
            args: ['status', company.id], hint: (command) => `Export it when no sync is running (${command} shows its data sets), then --resume.`,
          });
        }
        this.restarts += 1;
        this.env.note(`${what}; exporting it again from its first page.`);
        await this.rewind();
      }
    }
  }

  /** Back to where the current company began: part file, encoder, counts, bookmark. */
  private async rewind(): Promise<void> {
    const position = this.position!;
    await this.file!.truncate(position.startBytes);
    this.encoder = createEncoder(this.plan.format, this.plan.allCompanies, position.startEncoder, this.plan.csvEscape ?? true, recordColumns(this.plan.dataType));
    this.records = position.startRecords;
    this.position = { ...position, pagesDone: 0, bookmark: {} };
    delete this.position.total;
    delete this.position.snapshot;
    this.saveCheckpoint();
  }

  private async exportSnapshot(company: ListedCompany, index: number): Promise<CompanyOutcome> {
    const { plan, env } = this;
    const position = this.position!;
    const previous = this.previous[company.id];
    const tracker = new BookmarkTracker(previous, position.bookmark);
    const query = incrementalQuery(plan.query, previous);
    const companyStartRecords = position.startRecords;
    const sent = { pageSize: plan.pageSize, query, orderBy: plan.orderBy };
    let pageBytes = 0;

    const settle = (request: Promise<unknown>): Promise<ReadPage> => {
      this.pages.requested += 1;
      const page = request.then((body) => {
        pageBytes = Math.max(pageBytes, bodyBytes(body));
        return toPage(body);
      });
      page.catch(() => undefined); // awaited below, or abandoned; never an unhandled rejection
      return page;
    };
    // Every page request goes through the limiter; one still waiting for a slot when its window closes is never sent.
    const pages = new CompanyPages({
      numbered: (page, signal = env.signal) =>
        settle(this.limit.run(() => api.rawDataPage(env.client, company.id, plan.dataPath, { page, ...sent }, signal), signal)),
      linked: (href) => settle(this.limit.run(() => api.rawLinkedPage(env.client, href, env.signal), env.signal)),
      snapshot: () => readSnapshot(env.client, company.id, plan.dataType, env.signal),
      sent,
      pageSize: plan.pageSize,
      windowSize: () => env.window ?? windowFor(pageBytes, 2 * (plan.concurrency ?? PAGES_IN_FLIGHT)),
      signal: env.signal,
    }, position);
    this.pagesInFlight = pages;
    const fresh = position.pagesDone === 0;
    try {
      let page: ReadPage | undefined = await pages.first(async (err) =>
        (fresh && err instanceof ApiRequestError ? unavailable(err, company, this.plan, this.env) : err));
      for (let number = position.pagesDone + 1; page; number++) {
        if (env.signal.aborted) throw env.signal.reason;
        const following = pages.following(page, number);
        // Let the requests just handed out leave (a request is written a tick after it gets a socket) before the synchronous encoding below.
        if (following) await new Promise((resolve) => setImmediate(resolve));
        await this.writePage(page, company, index, tracker, companyStartRecords);
        pages.written();
        page = following ? await following : undefined;
      }
    } finally {
      const counters = pages.close();
      if (counters) this.countWindow(counters);
    }
    // The closing snapshot read is a round trip: the flush that commit needs anyway goes in its shadow.
    const verified = pages.verify();
    await (index === this.companies.length - 1 && this.file ? this.file.flushDuring(verified) : verified);
    return { records: this.records - companyStartRecords, bookmark: tracker };
  }

  /** Encodes and writes one page, then moves the checkpoint past it when one is due. */
  private async writePage(page: ReadPage, company: ListedCompany, index: number, tracker: BookmarkTracker, companyStartRecords: number): Promise<void> {
    const { plan, env } = this;
    const position = this.position!;
    const { records } = page;
    // --state: note every record's modifiedDate, and leave out those the last run already exported.
    let keep: ((i: number) => boolean) | undefined;
    if (plan.statePath) {
      const skip = new Set<number>();
      for (let i = 0; i < records.count; i++) {
        const record = records.object(i);
        if (tracker.alreadyExported(record)) skip.add(i);
        tracker.see(record);
      }
      if (skip.size > 0) keep = (i) => !skip.has(i);
    }
    this.writing = true;
    const encoded = this.encoder.page(records, keep, plan.allCompanies ? company.id : undefined);
    this.extraRows += encoded.extraRows;
    await this.sink.write(encoded.chunks);
    this.records += encoded.count;
    position.pagesDone += 1;
    position.bookmark = tracker.state();
    this.wroteAnyPage = true;
    this.writing = false;
    if (!this.pagesInFlight?.unvouched) this.saveCheckpoint(true);
    env.progress({
      records: this.records,
      resumedRecords: this.resumedRecords,
      companyTotal: position.total,
      companyRecords: this.records - companyStartRecords,
      companyIndex: index,
      companies: this.companies.length,
      concurrency: this.limit.concurrency,
      rate: this.limit.rate,
    });
  }

  private countWindow(counters: WindowCounters): void {
    this.pages.window = Math.max(this.pages.window, counters.limit);
    this.pages.peakWindow = Math.max(this.pages.peakWindow, counters.peak);
  }

  private summary(resumed: boolean, state: string | null): ExportSummary {
    return {
      dataType: this.plan.dataType,
      format: this.plan.format,
      out: this.plan.out ?? null,
      records: this.records,
      resumedRecords: this.resumedRecords,
      bytes: this.sink.bytes,
      seconds: Math.round((Date.now() - this.started) / 100) / 10,
      resumed,
      companies: { total: this.companies.length, exported: this.exported, skipped: this.skipped.size },
      skipped: [...this.skipped.values()],
      extraRows: this.extraRows,
      restarts: this.restarts,
      state,
      concurrency: this.limit.stats().concurrency,
      rate: this.limit.stats().rate,
      pages: { ...this.pages },
    };
  }
}

