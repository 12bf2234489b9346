// How busy the request thread is with clients' requests, as the sync worker's thread sees
// it: the request thread measures, every tenth of a second, the share of the interval in
// which at least one API request was being answered (event streams and the balancer's
// probes left out), and leaves it in shared memory; the worker reads it before each pass.
// While clients keep requests in flight most of the time (a bulk migration queues a sync
// of every company it makes), jobs run one at a time with a pause between them, so the
// CPU and the database's write lock serve the requests first.
//
// Not the thread's event-loop utilization: in the embedded service the same thread runs
// the CLI beside the API (`ferry sync --wait` following thousands of companies), and a
// sync's own events wake it, so the loop read busy through a whole sync while no client
// waited on an answer, and the worker held itself to one job at a time. With 1,000
// companies, a migration keeps requests in flight 75–100% of the time; the sync that
// follows, about 2% (at most 13% in a tenth of a second) while its loop read 35% busy.
import { performance } from 'node:perf_hooks';

/** Thousandths of the last interval in which a request was in flight, from which the request thread is busy. */
const BUSY_PER_MILLE = 250;
const INTERVAL_MS = 100;

/** The time the request thread had at least one client request in flight. */
export class RequestTime {
  private active = 0;
  private since = 0;
  private total = 0;

  /** A request began; `end()` once for each `start()`. */
  start(): void {
    if (this.active++ === 0) this.since = performance.now();
  }

  end(): void {
    if (--this.active === 0) this.total += performance.now() - this.since;
  }

  /** Milliseconds with a request in flight since this was made, up to now. */
  busyMs(): number {
    return this.total + (this.active > 0 ? performance.now() - this.since : 0);
  }
}

/** Where the request thread's load goes (it reaches the worker in its workerData). */
export function loadGauge(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

/** On the request thread: keeps `gauge` up to date from `requests` until the returned function is called. */
export function measureLoad(gauge: Int32Array, requests: RequestTime): () => void {
  let lastAt = performance.now();
  let lastBusy = requests.busyMs();
  const timer = setInterval(() => {
    const at = performance.now();
    const busy = requests.busyMs();
    Atomics.store(gauge, 0, Math.round(Math.min(1, (busy - lastBusy) / Math.max(1, at - lastAt)) * 1000));
    lastAt = at;
    lastBusy = busy;
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** In the worker: whether the request thread is busy now. */
export function busyTest(gauge: Int32Array): () => boolean {
  return () => Atomics.load(gauge, 0) >= BUSY_PER_MILLE;
}
