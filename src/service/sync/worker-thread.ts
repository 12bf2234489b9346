// The sync and push workers' thread: its own database connection, so a heavy sync
// (JSON, SQLite writes) never stalls the request thread.
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../lib/clock.js';
import { platformAdapter } from '../adapters/platforms.js';
import { createSealer } from '../secrets.js';
import { checkpoint, openDatabase, type Db } from '../store/sqlite/db.js';
import { sqliteAsyncStore } from '../store/sqlite/async-store.js';
import type { AsyncStore } from '../store/async-store.js';
import { isDatabaseUnreachable } from '../store/unreachable.js';
import { threadObserver, type ThreadQuestion, type ThreadReport, type ThreadWatch } from '../observability/thread-link.js';
import { busyTest } from './request-load.js';
import { SyncLoop } from './loop.js';

/**
 * The service's SQLite file (`checkpoints`: this thread copies the WAL into it, the first
 * of the process's sync threads), or the PostgreSQL database it shares with other processes.
 */
export type WorkerOptions = ({ dbFile: string; checkpoints: boolean } | { database: string }) & {
  secretKeyHex: string;
  platformUrl: string;
  concurrency?: number;
  pageSize?: number;
  /** The base of links in event payloads. */
  publicUrl?: string;
  /** How long a claimed pull stays leased without renewal (pull-lease.ts). */
  leaseSeconds?: number;
  /** The request thread's load from clients' requests (request-load.ts): jobs yield while it is busy. */
  load?: Int32Array;
  /** Metrics and log lines for the operator (observability/thread-link.ts). */
  watch?: ThreadWatch;
};

export type WorkerMessage = { type: 'wake' } | { type: 'stop' } | ThreadQuestion;
/**
 * `working`: sent once, when the loop first claims a job. An error crosses as its message,
 * with this thread's verdict on it: the database cannot be reached, or a fault.
 */
export type HostMessage = { type: 'stopped' } | { type: 'working' } | { type: 'error'; context: string; message: string; unreachable: boolean } | ThreadReport;

const options = workerData as WorkerOptions;
// Syncs are background work: on Linux a thread has a nice value of its own, and this one
// lets the request thread have the core first (elsewhere it would slow the whole process).
if (process.platform === 'linux') setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
const port = parentPort!;
const observer = threadObserver(port, options.watch);
let db: Db | undefined;
let store: AsyncStore;
if ('dbFile' in options) {
  db = openDatabase(options.dbFile);
  store = observer.timed(sqliteAsyncStore(db));
} else {
  const [{ openPostgres, poolCounts }, { createPgStore }] = await Promise.all([import('../store/pg/pool.js'), import('../store/pg/pg-store.js')]);
  // A connection per pull in flight (each page is a transaction), and two for claims and heartbeats.
  const pool = await openPostgres(options.database, { max: (options.concurrency ?? 4) + 2 });
  observer.countPool(() => poolCounts(pool));
  store = observer.timed(createPgStore(pool));
}
const adapter = platformAdapter(options.platformUrl);
/** An error crosses to the host as its message, with this thread's verdict on it. */
const postError = (err: unknown, context: string): void => port.postMessage({
  type: 'error', context, message: (err as Error)?.message ?? String(err), unreachable: isDatabaseUnreachable(err),
} satisfies HostMessage);
const loop = new SyncLoop({
  store,
  clock: systemClock,
  sealer: createSealer(Buffer.from(options.secretKeyHex, 'hex')),
  adapter,
  ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  ...(options.pageSize ? { pageSize: options.pageSize } : {}),
  ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
  ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  ...(options.load ? { busy: busyTest(options.load) } : {}),
  onClaimed: () => port.postMessage({ type: 'working' } satisfies HostMessage),
  signals: observer.signals,
  onError: postError,
});

// The request thread's commits leave the WAL to the first sync thread (app-background.ts):
// once a second, if another connection committed (`data_version` moves only for those),
// the WAL's pages are copied into the database file there, off the request thread. Each
// sync thread's own commits checkpoint as SQLite does by default, once the WAL passes 1,000
// pages: a checkpoint after each of its commits as well cost about 11 ms (two fsyncs) ten
// times a second, an eighth of the thread's time through a sync. Every 100 ms, with the
// other sync thread committing all the while, it was 2 s of this thread's 23 in a
// 1,000-company sync; a second leaves the WAL at most a second of the requests' commits.
const CHECKPOINT_EVERY_MS = 1_000;
let checkpointedAt: unknown;
const checkpoints = 'dbFile' in options && options.checkpoints ? setInterval(() => {
  // Through the store, which waits for this thread's transaction in progress to end (one
  // begun since is left alone: the next tick looks again).
  void store.dataVersion().then(() => {
    if (!db?.open || db.inTransaction) return;
    const othersWrote = db.pragma('data_version', { simple: true });
    if (othersWrote === checkpointedAt) return;
    checkpoint(db);
    checkpointedAt = othersWrote;
  }).catch((err: unknown) => postError(err, 'WAL checkpoint'));
}, CHECKPOINT_EVERY_MS) : undefined;
checkpoints?.unref();

port.on('message', (message: WorkerMessage) => {
  if (observer.answer(message)) return;
  if (message.type === 'wake') loop.wake();
  if (message.type === 'stop') {
    clearInterval(checkpoints);
    void loop.stop().then(async () => {
      await adapter.close();
      await store.close();
      port.postMessage({ type: 'stopped' } satisfies HostMessage);
      port.close();
    });
  }
});
loop.start();
