// The account's events, read back: GET /events (a page after a sequence number),
// GET /events/types (the catalogue) and GET /events/stream (server-sent events, resumable
// with Last-Event-ID). The numbers a client sees are the account's own (EventRow.account_seq),
// so they tell nothing of other accounts. The stream never polls the database on its own:
// it reads when the event bus says something was committed (ctx.events), 500 events at a
// time, and waits for a slow reader's socket to drain instead of buffering for it. Open
// streams are capped per key, per account and per process, and a revoked key's streams
// end within a second (events/open-streams.ts). docs/events.md.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openFileLimit } from '../../lib/open-files.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { assertOwns } from '../http/auth.js';
import { queryOf } from '../http/body.js';
import { defineRoute } from '../http/route.js';
import { EVENT_TYPES, isEventType } from '../events/catalogue.js';
import { defaultStreamLimits, OpenStreams, type StreamLimits, type StreamSlot } from '../events/open-streams.js';
import type { EventRow } from '../store/events.js';

/** A comment line this often keeps proxies (and the client's idle timeout) from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;
/** Events read per store call while catching up. */
const READ_BATCH = 500;
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 500;

export interface EventRouteOptions {
  /** The stream's heartbeat interval (tests shorten it). */
  heartbeatMs?: number;
  /** Caps on open streams (defaultStreamLimits() for those not given). */
  streamLimits?: Partial<StreamLimits>;
}

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw errors.invalidParameter(name, 'give it once');
  return value;
}

/** A number the account gave one of its events (or 0): an integer cursor. */
function sequenceNumber(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (!/^\d{1,15}$/.test(text)) throw errors.invalidParameter(name, 'must be an event sequence number (an integer, 0 or more)');
  return Number(text);
}

function listLimit(query: Query): number {
  const raw = single(query, 'limit');
  if (raw === undefined || raw.trim() === '') return DEFAULT_LIST_LIMIT;
  const text = raw.trim();
  if (!/^\d{1,4}$/.test(text) || Number(text) > MAX_LIST_LIMIT) throw errors.invalidParameter('limit', `must be an integer from 0 to ${MAX_LIST_LIMIT}`);
  return Number(text);
}

interface StreamFilter {
  types?: Set<string>;
  companyId?: string;
}

/** `types=a,b` (or repeated) and `companyId=`: checked before the stream starts, so mistakes are plain 4xx answers. */
async function streamFilter(ctx: ServiceContext, request: FastifyRequest): Promise<StreamFilter> {
  const query = queryOf(request);
  const filter: StreamFilter = {};
  const rawTypes = query.types;
  if (rawTypes !== undefined) {
    const names = (Array.isArray(rawTypes) ? rawTypes : [rawTypes]).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
    if (names.length === 0) throw errors.invalidParameter('types', 'name at least one event type, comma-separated');
    const unknown = names.filter((n) => !isEventType(n));
    if (unknown.length > 0) {
      throw errors.invalidParameter('types', `unknown event type${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}; valid: ${EVENT_TYPES.join(', ')}`);
    }
    filter.types = new Set(names);
  }
  const companyId = single(query, 'companyId')?.trim();
  if (companyId !== undefined && companyId !== '') {
    // As ownedCompany: 404 when there is no such company, 403 when it is another account's.
    const company = await ctx.store.getCompany(companyId);
    if (!company) throw errors.companyNotFound(companyId);
    assertOwns(request.auth, company.client_id);
    filter.companyId = company.id;
  }
  return filter;
}

const matches = (filter: StreamFilter, row: EventRow) =>
  (!filter.types || filter.types.has(row.event_type)) && (!filter.companyId || row.company_id === filter.companyId);

/** One message: the event's stored body is one line of JSON, so it is one `data:` line. */
const message = (row: EventRow) => `id: ${row.account_seq}\nevent: ${row.event_type}\ndata: ${row.body}\n\n`;

/** Where the stream starts: after Last-Event-ID (a reconnecting reader), else after `?after=`, else after the account's newest event. */
async function startAfter(ctx: ServiceContext, request: FastifyRequest): Promise<number> {
  const header = request.headers['last-event-id'];
  const fromHeader = sequenceNumber(Array.isArray(header) ? header[0] : header, 'Last-Event-ID');
  return fromHeader ?? sequenceNumber(single(queryOf(request), 'after'), 'after') ?? await ctx.store.latestAccountEventSeq(request.auth.client.id);
}

export function registerEventRoutes(app: FastifyInstance, ctx: ServiceContext, options: EventRouteOptions = {}): void {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const streams = new OpenStreams({ ...defaultStreamLimits(openFileLimit()), ...options.streamLimits }, ctx.store);
  /** Open streams, ended when the service closes (app.close() waits for open connections). */
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    streams.close();
    for (const end of [...open]) end();
  });

  defineRoute(app, '/events/types', {
    GET: async () => ({ results: EVENT_TYPES }),
  });

  defineRoute(app, '/events', {
    GET: async (request, reply) => eventsPage(ctx, request, reply),
  });

  defineRoute(app, '/events/stream', {
    GET: async (request, reply) => {
      const filter = await streamFilter(ctx, request);
      const after = await startAfter(ctx, request);
      if (request.method === 'HEAD') {
        reply.type('text/event-stream; charset=utf-8');
        return '';
      }
      // Taken with no wait before the stream holds it: of many opened at once, only the cap's number start.
      const slot = streams.take(request.auth.keyId, request.auth.caller.id);
      new EventStream(ctx, request, reply, { filter, after, slot, heartbeatMs, open }).start();
    },
  });
}

/** GET /events, spliced as text: each entry is the stored event, byte for byte, with its sequence number first. */
async function eventsPage(ctx: ServiceContext, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  const query = queryOf(request);
  const after = sequenceNumber(single(query, 'after'), 'after') ?? 0;
  const limit = listLimit(query);
  const clientId = request.auth.client.id;
  // Read before the page: an event committed in between has a higher number, so it is not skipped.
  const head = await ctx.store.latestAccountEventSeq(clientId);
  const rows = limit === 0 ? [] : await ctx.store.eventsAfter(clientId, after, limit);
  // Where to continue: after the last entry of a full page; after everything seen when the list ran out.
  const lastSequence = rows.length > 0 && rows.length === limit ? rows[rows.length - 1]!.account_seq : Math.max(after, head, rows[rows.length - 1]?.account_seq ?? 0);
  const entries = rows.map((row) => `{"sequence":${row.account_seq},${row.body.slice(1)}`);
  reply.type('application/json; charset=utf-8');
  return `{"results":[${entries.join(',')}],"lastSequence":${lastSequence}}`;
}

interface StreamSetup {
  filter: StreamFilter;
  /** The sequence number the stream starts after. */
  after: number;
  slot: StreamSlot;
  heartbeatMs: number;
  /** The service's open streams, each by its `end`. */
  open: Set<() => void>;
}

/** One reader's stream of events: it writes what was committed after its cursor whenever the bus says something was. */
class EventStream {
  private readonly clientId: string;
  private readonly raw: FastifyReply['raw'];
  private cursor: number;
  private closed = false;
  private pumping = false;
  private again = false;
  private drained: (() => void) | undefined;
  private unsubscribe!: () => void;
  private heartbeat!: NodeJS.Timeout;

  constructor(private readonly ctx: ServiceContext, request: FastifyRequest, private readonly reply: FastifyReply, private readonly setup: StreamSetup) {
    this.clientId = request.auth.client.id;
    this.raw = reply.raw;
    this.cursor = setup.after;
  }

  /** Takes the response over from fastify, sends the headers and the starting point, and catches up. */
  start(): void {
    const { raw, reply, setup } = this;
    reply.hijack();
    raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // A stream's connection is not reused: when the stream ends (service closing), so does the socket.
      connection: 'close',
      'x-accel-buffering': 'no',
    });
    raw.socket?.setNoDelay(true);

    this.unsubscribe = this.ctx.events.subscribe(() => void this.pump());
    this.heartbeat = setInterval(() => {
      if (!this.closed && !raw.writableNeedDrain) raw.write(': keep-alive\n\n');
    }, setup.heartbeatMs);
    this.heartbeat.unref();
    setup.slot.cut = this.end; // its key was revoked
    setup.open.add(this.end);
    raw.on('close', this.end);
    raw.on('error', this.end);
    // A reader gone while the request was checked has already closed: its slot is freed now.
    if (raw.destroyed) return this.end();
    // The starting point as the last event id (a message without data is no event), so a
    // reader that reconnects before its first event resumes here instead of "from now".
    raw.write(`id: ${setup.after}\n\n`);
    void this.pump();
  }

  /** Ends the stream once, freeing its slot; bound, as the slot, the service and the socket's events call it. */
  readonly end = (): void => {
    if (this.closed) return;
    this.closed = true;
    this.setup.slot.release();
    this.unsubscribe();
    clearInterval(this.heartbeat);
    this.setup.open.delete(this.end);
    this.drained?.();
    // A reader that stopped reading cannot be ended politely: its buffer never drains.
    if (this.raw.writableNeedDrain) this.raw.destroy();
    else this.raw.end();
  };

  private waitForDrain(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.drained = () => {
        this.drained = undefined;
        resolve();
      };
      this.raw.once('drain', this.drained);
    });
  }

  /** Reads and writes everything after the cursor; a wake-up while it runs makes it look again. */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        if (!(await this.catchUp())) return;
      } while (this.again && !this.closed);
    } catch {
      this.end(); // the store is closing
    } finally {
      this.pumping = false;
    }
  }

  /** Writes the events after the cursor that the filter lets through, READ_BATCH a read; false once the stream ended. */
  private async catchUp(): Promise<boolean> {
    for (;;) {
      const rows = await this.ctx.store.eventsAfter(this.clientId, this.cursor, READ_BATCH);
      if (this.closed) return false; // ended while the read was under way
      for (const row of rows) {
        this.cursor = row.account_seq;
        if (!matches(this.setup.filter, row)) continue;
        if (!this.raw.write(message(row))) await this.waitForDrain();
        if (this.closed) return false;
      }
      if (rows.length < READ_BATCH) return true;
      await nextTurn(); // a long catch-up through filtered-out events lets other requests in
    }
  }
}
