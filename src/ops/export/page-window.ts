// Several pages of a data set requested at once, by page number, and handed to the writer
// strictly in order. The first page says how many there are (totalResults / pageSize,
// rounded up); the rest are asked for through the adaptive limiter, so as many travel at
// once as the service answers well. A page that arrives before those ahead of it waits in
// a reorder window of at most `limit` pages: requested and not yet written, whether in
// flight, waiting for a slot in the limiter or arrived. While the window is full no page is
// requested, so memory stays bounded whatever the latency or the size of the data set.
import { setMaxListeners } from 'node:events';
import type { PageMeta, ReadPage } from './page.js';

/** Most pages requested at once (the limiter's ceiling for an export). */
export const PAGES_IN_FLIGHT = 16;
/**
 * Pages in flight at the start, before the limiter has learned anything: half the
 * ceiling. Starting lower costs round trips that an export of a few hundred pages never
 * wins back; the limiter still backs off from here at the first sign of trouble.
 */
export const FIRST_PAGES_IN_FLIGHT = 8;
/** The window's ceiling in pages: twice the pages in flight, so arrivals out of order do not stall the limiter. */
export const MAX_WINDOW = 2 * PAGES_IN_FLIGHT;
/** Response bytes the window may hold; with large pages it holds fewer of them (never fewer than 2). */
export const WINDOW_BYTES = 20 * 1024 * 1024;

/** The window for pages of about `pageBytes` bytes (the first page's size), within `ceiling`. */
export function windowFor(pageBytes: number, ceiling = MAX_WINDOW): number {
  const byBytes = Math.floor(WINDOW_BYTES / Math.max(1, pageBytes));
  return Math.max(2, Math.min(ceiling, byBytes));
}

/** The number of the last page, or undefined when the envelope does not say (no totalResults or pageSize). */
export function lastPage(meta: PageMeta, pageSize: number): number | undefined {
  const size = meta.pageSize ?? pageSize;
  if (!(meta.totalResults >= 0) || !(size > 0)) return undefined;
  return Math.max(1, Math.ceil(meta.totalResults / size));
}

/**
 * Does the service page by number with exactly the parameters the export sends? True when
 * `next` (the link of page `page`) names page `page + 1` and otherwise the same parameters
 * (pageSize, query, orderBy), nothing more. A service whose links carry anything else (a
 * cursor, a token) is followed link by link instead.
 */
export function pagesByNumber(next: string, page: number, sent: Record<string, string | number | undefined>): boolean {
  const at = next.indexOf('?');
  if (at < 0) return false;
  const linked = [...new URLSearchParams(next.slice(at + 1))];
  const params: Record<string, string | number | undefined> = { ...sent, page: page + 1 };
  const expected = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${String(v)}`)
    .sort();
  const got = linked.map(([k, v]) => `${k}=${v}`).sort();
  return got.length === expected.length && got.every((pair, i) => pair === expected[i]);
}

export interface WindowCounters {
  /** The bound: most pages the window may hold. */
  limit: number;
  /** Most pages it held at any moment. */
  peak: number;
}

/**
 * Pages `from`..`to` requested through `fetch` (which goes through the limiter), handed out
 * in order by take(). `held` counts the pages requested and not yet written plus the page
 * being written when the window began (the first page, fetched on its own).
 */
export class PageWindow {
  private readonly requested = new Map<number, Promise<ReadPage>>();
  private readonly controller = new AbortController();
  private readonly parent: AbortSignal;
  private readonly onAbort = () => this.controller.abort(this.parent.reason);
  private nextToRequest: number;
  private held: number;
  private failed = false;
  private closed = false;
  private unanswered: number;
  private allIn: () => void = () => undefined;
  readonly counters: WindowCounters;
  /** Resolves once every page of the window has been answered (never, if one fails). */
  readonly answered: Promise<void>;

  constructor(
    private readonly fetch: (page: number, signal: AbortSignal) => Promise<ReadPage>,
    from: number,
    readonly to: number,
    limit: number,
    signal: AbortSignal,
    held = 1,
  ) {
    this.nextToRequest = from;
    this.held = held;
    this.unanswered = Math.max(0, to - from + 1);
    this.answered = new Promise((resolve) => {
      this.allIn = resolve;
    });
    if (this.unanswered === 0) this.allIn();
    this.parent = signal;
    // The run's signal (Ctrl-C) aborts this window's requests, and so does close().
    if (signal.aborted) this.controller.abort(signal.reason);
    else signal.addEventListener('abort', this.onAbort, { once: true });
    this.counters = { limit: Math.max(2, limit), peak: held };
    // Each page in the window listens for the abort a few times (waiting for a slot, the request, a retry's sleep).
    setMaxListeners(4 * this.counters.limit + 10, this.controller.signal);
    this.fill();
  }

  /** Page `page`: the next one in order after the page being written. */
  take(page: number): Promise<ReadPage> {
    let request = this.requested.get(page);
    if (!request) {
      // Not requested yet (a later page failed first, which stops fill()); pages go out in
      // order, so the window holds nothing after it and has room for it.
      this.request(page);
      request = this.requested.get(page)!;
    }
    this.requested.delete(page);
    return request;
  }

  /** The page being written is written: its place in the window is free for the next request. */
  written(): void {
    this.held -= 1;
    this.fill();
  }

  /** Stops: what is in flight is aborted, nothing more is requested. */
  close(): void {
    this.closed = true;
    this.parent.removeEventListener('abort', this.onAbort);
    this.controller.abort();
    this.requested.clear();
  }

  private fill(): void {
    while (!this.closed && !this.failed && this.nextToRequest <= this.to && this.held < this.counters.limit) this.request(this.nextToRequest);
  }

  private request(page: number): void {
    const request = this.fetch(page, this.controller.signal);
    // Awaited by take(), or abandoned at close(); never an unhandled rejection. A page that
    // finally failed stops further requests: the pages before it are still written.
    request.then(() => {
      this.unanswered -= 1;
      if (this.unanswered === 0) this.allIn();
    }, () => {
      this.failed = true;
    });
    this.requested.set(page, request);
    this.nextToRequest = page + 1;
    this.held += 1;
    if (this.held > this.counters.peak) this.counters.peak = this.held;
  }
}
