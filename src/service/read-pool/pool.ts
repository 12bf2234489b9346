// Costly list reads (a query or an orderBy over many records) run in reader threads with
// connections of their own, so they never hold up the request thread, and clients take
// turns at them (fair-queue.ts). Plain pages stay on the request thread: they are index
// scans of one page and faster there than the hop to a thread and back.
import { Worker } from 'node:worker_threads';
import { threadUrl } from '../../lib/thread-url.js';
import { errors } from '../errors.js';
import type { AsyncStore } from '../store/async-store.js';
import type { Page, PagePlan } from '../store/paging.js';
import { FairQueue } from './fair-queue.js';
import type { ReaderOptions, ReaderReply, ReaderRequest } from './reader-thread.js';

export type ReadPoolOptions = ({
  /** The SQLite file the readers open. */
  dbFile: string;
  /** Reader threads (0 runs every read on the request thread). */
  threads: number;
} | { threads: 0 }) & {
  /** Costly reads one client may have waiting; past that, 429. */
  maxWaitingPerClient?: number;
};

interface Job {
  plan: PagePlan;
  resolve(page: Page<unknown>): void;
  reject(err: unknown): void;
}

interface Reader {
  worker: Worker;
  busy?: { id: number; client: string; job: Job };
}

const DEFAULT_MAX_WAITING_PER_CLIENT = 32;

export class ReadPool {
  private readonly queue: FairQueue<Job>;
  private readonly readers: Reader[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly store: AsyncStore, private readonly options: ReadPoolOptions) {
    this.queue = new FairQueue(options.threads, options.maxWaitingPerClient ?? DEFAULT_MAX_WAITING_PER_CLIENT);
  }

  /** One page of a list for `client`: costly plans in a reader thread, in turn with other clients. */
  page<Row>(client: string, plan: PagePlan): Promise<Page<Row>> {
    if (!plan.heavy || this.options.threads === 0) return this.store.runPage<Row>(plan);
    if (this.closed) return Promise.reject(errors.maintenance());
    return new Promise<Page<Row>>((resolve, reject) => {
      const job: Job = { plan, resolve: resolve as (page: Page<unknown>) => void, reject };
      if (!this.queue.add(client, job)) return reject(errors.tooManyRequests(1));
      this.pump();
    });
  }

  /** Costly reads waiting for a reader, for benches and tests. */
  waiting(client?: string): number {
    return this.queue.waitingCount(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(errors.maintenance());
    await Promise.all(this.readers.map((reader) => this.stop(reader)));
    this.readers.length = 0;
  }

  private pump(): void {
    for (;;) {
      const reader = this.idleReader();
      if (!reader) return;
      const next = this.queue.take();
      if (!next) return;
      const id = this.nextId++;
      reader.busy = { id, client: next.client, job: next.job };
      reader.worker.postMessage({ id, plan: next.job.plan } satisfies ReaderRequest);
    }
  }

  /** A reader with nothing to do, started on first need (the embedded CLI never pays for threads it does not use). */
  private idleReader(): Reader | undefined {
    const idle = this.readers.find((reader) => !reader.busy);
    if (idle || this.readers.length >= this.options.threads || !('dbFile' in this.options)) return idle;
    const reader: Reader = { worker: new Worker(threadUrl('./reader-thread.js', import.meta.url), { workerData: { dbFile: this.options.dbFile } satisfies ReaderOptions }) };
    reader.worker.on('message', (reply: ReaderReply) => this.finish(reader, reply));
    // A reader that dies fails its read (500) and is replaced on the next read.
    reader.worker.on('error', (err) => this.lose(reader, err));
    reader.worker.on('exit', () => this.lose(reader, new Error('reader thread exited')));
    this.readers.push(reader);
    return reader;
  }

  private finish(reader: Reader, reply: ReaderReply): void {
    const busy = reader.busy;
    if (!busy || busy.id !== reply.id) return;
    reader.busy = undefined;
    this.queue.done(busy.client);
    if ('error' in reply) busy.job.reject(new Error(reply.error));
    else busy.job.resolve(reply.page);
    this.pump();
  }

  private lose(reader: Reader, err: unknown): void {
    const at = this.readers.indexOf(reader);
    if (at < 0) return;
    this.readers.splice(at, 1);
    if (reader.busy) {
      this.queue.done(reader.busy.client);
      reader.busy.job.reject(err);
    }
    if (!this.closed) this.pump();
  }

  private async stop(reader: Reader): Promise<void> {
    const exited = new Promise<void>((resolve) => reader.worker.once('exit', () => resolve()));
    reader.worker.postMessage('close');
    await exited;
  }
}
