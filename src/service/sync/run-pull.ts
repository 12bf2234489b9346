// Runs one pull of a job (job.ts): fetch the platform's pages into a new generation of
// records, each page (with the cursor) written in a transaction the job's writer may share
// with other data types' writes (job-writes.ts), the last page publishing the generation. Crash-only:
// a pull killed at any point resumes at its cursor, and upserts make a repeated page
// harmless. Rate limits and platform faults reschedule the pull (not_before) rather
// than sleeping, so the clock drives retries and nothing waits in memory. Every write is
// conditional on this worker's lease (pull-lease.ts): one that lost the pull to another
// worker writes nothing of its page and stops, leaving the cursor and the records to the new holder.
import { isoSeconds } from '../../lib/clock.js';
import type { Validation } from '../errors.js';
import { PlatformAuthError, PlatformFetchError, PlatformRateLimitError } from '../adapters/adapter.js';
import type { RecordInput } from '../store/datasets.js';
import type { PullRow } from '../store/pulls.js';
import type { PullStatus } from '../store/pull-status.js';
import type { FieldType } from '../query/types.js';
import { isDatabaseLost } from '../store/pg/unavailable.js';
import type { SyncDeps } from './deps.js';
import { collectFields } from './fields.js';
import { pullSource, recordRow, type PullSource } from './pull-source.js';
import { checkPage } from './read-validation.js';
import { backgroundEvents as eventsOf, deauthorized } from './events.js';
import { LeaseLost, type HeldPull, type PullFields } from './pull-lease.js';
import type { ConnectionAccess, PullConnection } from './connection-access.js';
import type { JobWriter, PullWrite } from './job-writes.js';

/** What the job hands each of its pulls: the connections read once, the writer, and a turn to fetch. */
export interface JobShare {
  access: ConnectionAccess;
  writer: JobWriter;
  /** Runs a platform fetch when one of the job's few fetch slots is free. */
  fetchSlot<T>(fetch: () => Promise<T>): Promise<T>;
}

/** One pull of a job, and what it shares with the others. */
export interface JobPull extends JobShare {
  deps: SyncDeps;
  pull: PullRow;
  held: HeldPull;
}

const MAX_RATE_LIMIT_RETRIES = 10;
const MAX_FETCH_RETRIES = 3;
const PRUNE_BATCH = 5000;
/** Records whose shape is sampled per page to learn queryable fields. */
const FIELD_SAMPLE = 50;

/** 'LeaseLost': another worker took the pull over; this one wrote nothing since. */
export type PullOutcome = PullStatus | 'LeaseLost';

export async function runPull(run: JobPull): Promise<PullOutcome> {
  try {
    return await fetchPages(run);
  } catch (err) {
    if (err instanceof LeaseLost) return 'LeaseLost';
    throw err;
  }
}

async function fetchPages(run: JobPull): Promise<PullStatus> {
  const ready = await prerequisites(run);
  if (typeof ready === 'string') return ready;
  try {
    return await writePages(run, ready);
  } catch (err) {
    // The database gone is no fault of the pull: it stays as it is (nothing of the failed
    // page was written), and once its lease runs out a worker resumes it from its last page.
    if (err instanceof LeaseLost || isDatabaseLost(err)) throw err;
    return handleFailure(run, ready.connection.id, err);
  }
}

/** What a pull needs before its first page: a Linked connection, its tokens, and where on the platform the data type is read. */
interface Ready {
  connection: PullConnection['connection'];
  tokensRead: NonNullable<ReturnType<ConnectionAccess['stored']>>;
  source: PullSource;
  validation: Validation;
}

/** The pull's connection, tokens and source; or, when one is missing, the status the pull ended with. */
async function prerequisites(run: JobPull): Promise<Ready | PullStatus> {
  const { deps: { clock }, pull, access } = run;
  const finish = (status: PullStatus, fields?: PullFields) => endBeforeFirstPage(run, status, fields);
  // The connection, its tokens and its company's client id in one read for the job; the tokens
  // are opened only for a Linked connection. A connection goes with its company, so none found covers both.
  const found = await access.connection(pull.connection_id);
  if (!found) return finish('Cancelled', { status_description: 'The connection was deleted.' });
  const { connection } = found;
  if (connection.status === 'Deauthorized') {
    return finish('AuthError', { status_description: 'The connection needs reauthorization.', error_message: 'Reauthorization required: the platform revoked the grant.' });
  }
  if (connection.status !== 'Linked') {
    return finish('PrerequisiteNotMet', { status_description: `The connection is ${connection.status}, not Linked.` });
  }
  const tokensRead = access.stored(found);
  if (!tokensRead) return finish('AuthError', { status_description: 'The connection has no tokens.', error_message: 'Reauthorization required: no tokens stored.' });

  const source = await pullSource(access.configs(found), clock, connection.integration_key, pull.data_type);
  if ('unavailable' in source) return finish('PrerequisiteNotMet', { status_description: source.unavailable });
  const validation: Validation = pull.validation ? (JSON.parse(pull.validation) as Validation) : { errors: [], warnings: [] };
  return { connection, tokensRead, source, validation };
}

/** The pull ended before its first page: its final state and its events, in one transaction. */
async function endBeforeFirstPage({ deps, pull, held, writer }: JobPull, status: PullStatus, fields: PullFields = {}): Promise<PullStatus> {
  await writer.write({ pull, held, change: { status, completed: isoSeconds(deps.clock.now()), lease_until: null, ...fields }, ends: true });
  return status;
}

/** Where the pull is: what it has fetched so far, the next page's cursor, and the fields its records have shown. */
interface Progress {
  cursor: string | undefined;
  fetched: number;
  progress: number;
  fields: Map<string, FieldType>;
}

/** Fetches and writes the pull's pages from its cursor, one transaction a page, until the last one publishes the generation. */
async function writePages(run: JobPull, { connection, tokensRead, source, validation }: Ready): Promise<PullStatus> {
  const { deps, pull, held, access, writer } = run;
  const { store, clock, adapter } = deps;
  const now = () => isoSeconds(clock.now());
  const state: Progress = { cursor: pull.cursor ?? undefined, fetched: pull.fetched, progress: pull.progress, fields: new Map() };
  let tokens = await access.tokens(connection, tokensRead);
  const fetchPage = (at: string | undefined) => run.fetchSlot(async () => {
    try {
      return await adapter.fetchPage(connection.integration_key, tokens, source.platformType, at, deps.pageSize ?? 1000);
    } catch (err) {
      // An access token that expired mid-sync (not a revoked grant): refreshed once for the job, and on.
      if (!(err instanceof PlatformAuthError) || err.revoked) throw err;
      tokens = await access.refused(connection, tokens);
      return adapter.fetchPage(connection.integration_key, tokens, source.platformType, at, deps.pageSize ?? 1000);
    }
  });
  // One page in flight ahead: the platform prepares page N+1 while page N is written. Its
  // result (or failure) is only looked at after page N's transaction, so what is written
  // and in what order is as if the pages were fetched one after the other.
  let next = fetchPage(state.cursor);
  for (;;) {
    const page = await next;
    if (held.lost) throw new LeaseLost(pull.id);
    if (page.next) {
      next = fetchPage(page.next);
      next.catch(() => undefined); // awaited on the next turn; never an unhandled rejection if this page's write throws
      // undici writes a request on a reused keep-alive socket only in the event loop's
      // check phase: without this turn it could wait for the write below (synchronous under SQLite).
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stored = page.records.map(source.map);
    checkPage(pull.data_type, stored, validation);
    const rows: RecordInput[] = stored.map((record, i) => {
      if (i < FIELD_SAMPLE) collectFields(record, state.fields);
      return recordRow(record);
    });
    state.fetched += rows.length;
    state.cursor = page.next;
    state.progress = page.total ? Math.min(99, Math.floor((state.fetched / page.total) * 100)) : Math.min(99, state.progress + 1);
    const completed = state.cursor ? undefined : now();
    // Store calls only: the next page's fetch was started above and is awaited after the commit.
    // The lease is checked first: a page of a pull this worker lost is not written at all.
    const { replaced } = await writer.write(pageWrite(run, { connectionId: connection.id, rows, state: { ...state }, validation }, completed));
    deps.signals?.recordsWritten(pull.data_type, rows.length);
    if (!completed) continue;
    // The old snapshot is no longer visible; remove it in small steps so readers never wait long.
    if (replaced !== null) while ((await store.pruneGenerations(pull.company_id, pull.data_type, pull.generation, PRUNE_BATCH)) > 0);
    return 'Complete';
  }
}

/** One page's rows, and the pull as it stands once they are written. */
interface PageWrite {
  connectionId: string;
  rows: RecordInput[];
  state: Progress;
  validation: Validation;
}

/**
 * A page's write: its records and the fields they showed, and the pull's cursor and counts.
 * The last page (`completed`) also ends the pull and publishes its generation, with its
 * events, in the same commit (one commit a page, the last one included).
 */
function pageWrite({ pull, held }: JobPull, { connectionId, rows, state, validation }: PageWrite, completed: string | undefined): PullWrite {
  const { cursor, fetched, progress, fields } = state;
  // `fetched` counts the records of every page committed into this pull's own generation:
  // when it is this page's alone, no record of the generation was committed before.
  const page = { connectionId, rows, fields, fresh: fetched === rows.length };
  const common = { fetched, attempts: 0, validation: JSON.stringify(validation) };
  if (!completed) return { pull, held, page, change: { status: 'Fetching', cursor: cursor ?? null, progress, ...common } };
  // This page holds all the generation's records: their distinct ids are its count.
  const records = page.fresh ? new Set(rows.map((r) => r.id)).size : undefined;
  return {
    pull, held, page, ends: true, publish: { connectionId, completed, ...(records === undefined ? {} : { records }) },
    change: { status: 'Complete', cursor: null, progress: 100, ...common, completed, lease_until: null },
  };
}

async function handleFailure({ deps, pull, held, writer }: JobPull, connectionId: string, err: unknown): Promise<PullStatus> {
  const { clock } = deps;
  const now = clock.now();
  const later = (seconds: number) => isoSeconds(new Date(now.getTime() + seconds * 1000));
  const attempts = pull.attempts + 1;
  /** The pull's final state (this worker's to write, or nothing is), then what `also` records, then its events: one transaction. */
  const ended = async (status: PullStatus, fields: PullFields, also?: () => Promise<void>): Promise<PullStatus> => {
    await writer.write({ pull, held, change: { status, completed: isoSeconds(now), lease_until: null, ...fields }, ends: true, ...(also ? { also } : {}) });
    return status;
  };
  /** Back in the queue until `notBefore`, for any worker. */
  const retry = async (notBefore: string, description: string): Promise<PullStatus> => {
    await writer.write({ pull, held, change: { attempts, not_before: notBefore, lease_until: null, status_description: description } });
    return 'Fetching';
  };
  if (err instanceof PlatformAuthError && err.revoked) {
    return ended('AuthError', {
      status_description: 'The platform revoked the grant; the connection is Deauthorized.', error_message: `Reauthorization required: ${err.message}`,
    }, () => deauthorized(eventsOf(deps), connectionId, {
      statusCode: '401', statusText: 'Unauthorized', status: 'Active', erroredOnUtc: isoSeconds(now),
      errorMessage: `Reauthorization required: ${err.message}`,
    }));
  }
  if (err instanceof PlatformRateLimitError) {
    if (attempts > MAX_RATE_LIMIT_RETRIES) return ended('RateLimitError', { error_message: err.message });
    return retry(later(err.retryAfterSeconds), `Waiting ${err.retryAfterSeconds}s for the platform's rate limit.`);
  }
  if (err instanceof PlatformFetchError || err instanceof PlatformAuthError) {
    if (attempts > MAX_FETCH_RETRIES) return ended('FetchError', { error_message: err.message });
    return retry(later(2 ** attempts), `Retrying after: ${err.message}`);
  }
  deps.onError?.(err, `pull ${pull.id}`);
  return ended('InternalError', { error_message: 'Internal error while syncing.' });
}
