// Costly list reads (a query or an orderBy over many records) run in reader threads with
// connections of their own, so they never hold up the request thread, and clients take
// turns at them (thread-pool.ts). Plain pages stay on the request thread: they are index
// scans of one page and faster there than the hop to a thread and back.
import { Worker } from 'node:worker_threads';
import { threadUrl } from '../../lib/thread-url.js';
import type { AsyncStore } from '../store/async-store.js';
import type { Page, PagePlan } from '../store/paging.js';
import type { ReaderOptions } from './reader-thread.js';
import { ThreadPool } from './thread-pool.js';

export type ReadPoolOptions = ({
  /** The SQLite file the readers open. */
  dbFile: string;
  /** Reader threads (0 runs every read on the request thread). */
  threads: number;
} | { threads: 0 }) & {
  /** Costly reads one client may have waiting; past that, 429. */
  maxWaitingPerClient?: number;
};

const DEFAULT_MAX_WAITING_PER_CLIENT = 32;

export class ReadPool {
  /** None when reads run on the request thread. */
  private readonly readers?: ThreadPool<PagePlan, Page<unknown>>;

  constructor(private readonly store: AsyncStore, options: ReadPoolOptions) {
    if (!('dbFile' in options) || options.threads === 0) return;
    const workerData: ReaderOptions = { dbFile: options.dbFile };
    this.readers = new ThreadPool({
      threads: options.threads,
      maxWaitingPerClient: options.maxWaitingPerClient ?? DEFAULT_MAX_WAITING_PER_CLIENT,
      start: () => new Worker(threadUrl('./reader-thread.js', import.meta.url), { workerData }),
    });
  }

  /** One page of a list for `client`: costly plans in a reader thread, in turn with other clients. */
  page<Row>(client: string, plan: PagePlan): Promise<Page<Row>> {
    if (!plan.heavy || !this.readers) return this.store.runPage<Row>(plan);
    return this.readers.run(client, plan) as Promise<Page<Row>>;
  }

  /** Costly reads waiting for a reader, for benches and tests. */
  waiting(client?: string): number {
    return this.readers?.waiting(client) ?? 0;
  }

  async close(): Promise<void> {
    await this.readers?.close();
  }
}
