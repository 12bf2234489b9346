// How busy the request thread is, as the sync worker's thread sees it: the request thread
// measures its event loop's utilization every tenth of a second and leaves it in shared
// memory, and the worker reads it before each pass. While the request thread is busy (a
// bulk migration queues a sync of every company it makes), pulls run one at a time with
// a pause between them, so the platform, the CPU and the database's write lock serve the
// requests first; a client polling sync statuses keeps the loop far from busy.
import { performance } from 'node:perf_hooks';

/** Thousandths of the last interval the request thread spent running (not waiting for I/O) above which it is busy. */
const BUSY_PER_MILLE = 250;
const INTERVAL_MS = 100;

/** Where the request thread's load goes (it reaches the worker in its workerData). */
export function loadGauge(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

/** On the request thread: keeps `gauge` up to date until the returned function is called. */
export function measureLoad(gauge: Int32Array): () => void {
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    Atomics.store(gauge, 0, Math.round(performance.eventLoopUtilization(now, last).utilization * 1000));
    last = now;
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** In the worker: whether the request thread is busy now. */
export function busyTest(gauge: Int32Array): () => boolean {
  return () => Atomics.load(gauge, 0) >= BUSY_PER_MILLE;
}
