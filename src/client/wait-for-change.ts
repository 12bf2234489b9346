// Waits that wake on the service's events. A command that waits for work the service does
// by itself (syncs, pushes) opens one feed of the event stream for its whole run; each poll
// loop (poll.ts) then looks again as soon as an event it cares about arrives, and keeps its
// usual polling as a safety net, so a missed event costs at most one poll interval, never a
// wrong answer. The engines decide everything from what they read, as they do when polling:
// an event only says "look now". A target without the stream (the public API answers 404)
// leaves the loops polling as before.
import type { ApiClient } from './client.js';
import { ApiRequestError, describeError, StreamUnavailableError, UnexpectedAnswerError } from './errors.js';
import { streamEvents } from './event-stream.js';
import * as api from './api.js';
import type { ChangeEvent, ChangeFeed, FeedState, Wakeup } from './change-feed.js';
import { pause } from './poll.js';

export interface FeedOptions {
  /** Only these event types (the stream filters them on the service's side). */
  types: string[];
  /** Only this company's events. */
  companyId?: string;
  /** The command's signal: aborting it closes the feed. */
  signal: AbortSignal;
  /** A line for the person (verbose): the stream's state changes. */
  log?: (line: string) => void;
}

/** The events a wait for syncs looks out for: a data type's pull ended, or every queued one did. */
export const SYNC_EVENTS = ['ferry.read.dataType.completed', 'ferry.read.dataType.failed', 'read.completed'];

/** The event a wait for many companies' syncs looks out for: every pull of a company that was queued or running has ended. */
export const COMPANY_SYNC_EVENTS = ['read.completed'];

/** The events a wait for push operations of `dataType` looks out for. */
export const writeEvents = (dataType: string): string[] => [`${dataType}.write.successful`, `${dataType}.write.unsuccessful`];

/** The company an event is about (`referenceCompany.id`), when it names one. */
export function eventCompanyId(event: ChangeEvent): string | undefined {
  const reference = event.payload.referenceCompany as { id?: unknown } | undefined;
  return typeof reference?.id === 'string' ? reference.id : undefined;
}

/** A write event's push operation key (`id` of its payload). */
export function eventPushKey(event: ChangeEvent): string | undefined {
  return typeof event.payload.id === 'string' ? event.payload.id : undefined;
}

/** Events kept for waiters that are between two waits; more than this since one's mark and it looks at everything. */
const KEPT = 2000;
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 5000;

/**
 * Opens the stream for a command's run. It first asks where the account's events stand
 * (`GET /events`, `lastSequence`) and starts the stream after that point, so an event
 * committed while the stream is connecting is still delivered; the caller starts its work
 * (queuing syncs, pushing) after this resolves. A broken stream, or one refused with a 429
 * (the key holds as many streams as the service allows), reconnects after the last event
 * it delivered, the waits polling meanwhile; a 404 ends it for good and the waits poll.
 */
export async function openChangeFeed(client: ApiClient, options: FeedOptions): Promise<ChangeFeed> {
  const feed = new StreamFeed(client, options);
  await feed.findStart();
  feed.follow();
  return feed;
}

/** A feed over the event stream: the events it received (the last KEPT of them), and the waits they wake. */
class StreamFeed implements ChangeFeed {
  private readonly controller = new AbortController();
  private readonly stop = () => this.controller.abort();
  private readonly kept: ChangeEvent[] = [];
  /** Events received in all: `kept` holds the last of them. */
  private count = 0;
  private current: FeedState = 'connecting';
  private readonly waiters = new Set<() => void>();
  /** Where the next connection starts: after this sequence number (the newest event received), or from now. */
  private after: number | undefined;
  /** Connections broken in a row. */
  private failures = 0;

  constructor(private readonly client: ApiClient, private readonly options: FeedOptions) {
    options.signal.addEventListener('abort', this.stop, { once: true });
  }

  get state(): FeedState {
    return this.current;
  }

  mark(): number {
    return this.count;
  }

  /** Where the account's events stand (`GET /events`, `lastSequence`), so the stream starts after that point. */
  async findStart(): Promise<void> {
    try {
      this.after = await api.latestEventSequence(this.client, this.controller.signal);
    } catch (err) {
      // No list of events: the stream itself says whether there is one (a 404 ends it below).
      if (!(err instanceof ApiRequestError && err.status === 404)) this.options.log?.(`events: could not read where the events stand (${describeError(err)})`);
    }
  }

  /** Follows the stream in the background until the feed closes, reconnecting as the feed's comment says. */
  follow(): void {
    void this.run().catch(() => {
      this.current = 'stopped';
    });
  }

  private async run(): Promise<void> {
    const { signal } = this.controller;
    while (!signal.aborted) {
      try {
        await this.readStream();
      } catch (err) {
        if (signal.aborted) break;
        if (this.endsWith(err)) return;
        this.failures += 1;
        if (this.failures === 1) this.options.log?.(`events: the stream broke (${describeError(err)}); reconnecting, polling meanwhile`);
      }
      // A stream the service ended (it is restarting) resumes after the last event, as a broken one does.
      await pause(Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** this.failures), signal);
    }
    this.current = 'stopped';
  }

  /** One connection of the stream, from `after` until it ends or breaks. */
  private async readStream(): Promise<void> {
    const { options } = this;
    const stream = streamEvents(this.client, {
      types: options.types, ...(options.companyId ? { companyId: options.companyId } : {}),
      ...(this.after !== undefined ? { after: this.after } : {}), signal: this.controller.signal,
    });
    for await (const { sequence, event } of stream) {
      if (this.current !== 'live') options.log?.('events: following the event stream');
      this.current = 'live';
      this.failures = 0;
      this.after = sequence;
      this.receive(event);
    }
  }

  /** Whether the stream's failure is for good (the waits then poll alone); the feed's state says which. */
  private endsWith(err: unknown): boolean {
    const { log } = this.options;
    if (err instanceof StreamUnavailableError) {
      this.current = 'unavailable';
      log?.('events: the target has no event stream; waiting by polling');
      return true;
    }
    // A 429 (the key's open streams or its rate limit) passes: reconnect later, as from a drop.
    if ((err instanceof ApiRequestError && err.status < 500 && err.status !== 429) || err instanceof UnexpectedAnswerError) {
      // Asking again will not help (a refused key, a filter this service does not know): the polls carry on alone.
      this.current = 'stopped';
      log?.(`events: the stream stopped (${describeError(err)}); waiting by polling`);
      return true;
    }
    return false;
  }

  private receive(event: ChangeEvent): void {
    const { kept } = this;
    kept.push(event);
    if (kept.length > KEPT) kept.splice(0, kept.length - KEPT);
    this.count += 1;
    for (const wake of [...this.waiters]) wake();
  }

  next(since: number, relevant: (event: ChangeEvent) => boolean, ms: number, signal: AbortSignal): Promise<Wakeup> {
    return new Promise<Wakeup>((resolve) => {
      let settled = false;
      const finish = (events: ChangeEvent[] | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiters.delete(look);
        signal.removeEventListener('abort', quit);
        resolve({ events, mark: this.count });
      };
      const quit = () => finish([]);
      const look = () => {
        const first = this.count - this.kept.length;
        if (since < first) return finish(undefined);
        const found = this.kept.slice(since - first).filter(relevant);
        if (found.length > 0) finish(found);
      };
      const timer = setTimeout(quit, Math.max(0, ms));
      if (signal.aborted) return finish([]);
      look();
      if (settled) return;
      this.waiters.add(look);
      signal.addEventListener('abort', quit, { once: true });
    });
  }

  close(): void {
    this.options.signal.removeEventListener('abort', this.stop);
    this.controller.abort();
  }
}
