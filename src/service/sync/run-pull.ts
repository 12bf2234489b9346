// Runs one claimed pull: fetch the platform's pages into a new generation of records,
// one transaction per page (with the cursor), the last of which publishes the generation. Crash-only:
// a pull killed at any point resumes at its cursor, and upserts make a repeated page
// harmless. Rate limits and platform faults reschedule the pull (not_before) rather
// than sleeping, so the clock drives retries and nothing waits in memory.
import { isoSeconds } from '../../lib/clock.js';
import type { Validation } from '../errors.js';
import { PlatformAuthError, PlatformFetchError, PlatformRateLimitError } from '../integrations/adapter.js';
import type { RecordInput } from '../store/datasets.js';
import type { PullRow, PullStatus } from '../store/pulls.js';
import type { FieldType } from '../query/types.js';
import { freshTokens, readTokens } from '../tokens.js';
import type { SyncDeps } from './deps.js';
import { collectFields } from './fields.js';
import { pullSource, recordRow } from './pull-source.js';
import { checkPage } from './read-validation.js';
import { backgroundEvents as eventsOf, deauthorized, pullEnded } from './events.js';

export const LEASE_SECONDS = 120;
const MAX_RATE_LIMIT_RETRIES = 10;
const MAX_FETCH_RETRIES = 3;
const PRUNE_BATCH = 5000;
/** Records whose shape is sampled per page to learn queryable fields. */
const FIELD_SAMPLE = 50;

export async function runPull(deps: SyncDeps, pull: PullRow): Promise<PullStatus> {
  const { store, clock, sealer, adapter } = deps;
  const now = () => isoSeconds(clock.now());
  /** The pull's final state and its events in one transaction (joined when called inside one). */
  const finish = async (status: PullStatus, fields: Partial<PullRow> = {}): Promise<PullStatus> => {
    await store.transaction(async (tx) => {
      await tx.updatePull(pull.id, { status, completed: now(), lease_until: null, ...fields });
      await pullEnded(eventsOf(deps), pull.id);
    });
    return status;
  };

  const connection = await store.getConnectionById(pull.connection_id);
  if (!connection) return finish('Cancelled', { status_description: 'The connection was deleted.' });
  if (connection.status === 'Deauthorized') {
    return finish('AuthError', { status_description: 'The connection needs reauthorization.', error_message: 'Reauthorization required: the platform revoked the grant.' });
  }
  if (connection.status !== 'Linked') {
    return finish('PrerequisiteNotMet', { status_description: `The connection is ${connection.status}, not Linked.` });
  }
  let tokens = await readTokens(store, sealer, connection.id);
  if (!tokens) return finish('AuthError', { status_description: 'The connection has no tokens.', error_message: 'Reauthorization required: no tokens stored.' });

  const source = await pullSource(store, clock, pull.company_id, connection.integration_key, pull.data_type);
  if ('unavailable' in source) return finish('PrerequisiteNotMet', { status_description: source.unavailable });
  const validation: Validation = pull.validation ? (JSON.parse(pull.validation) as Validation) : { errors: [], warnings: [] };

  const fields = new Map<string, FieldType>();
  let cursor = pull.cursor ?? undefined;
  let fetched = pull.fetched;
  let progress = pull.progress;
  try {
    tokens = await freshTokens(store, sealer, adapter, connection, now);
    const fetchPage = async (at: string | undefined) => {
      try {
        return await adapter.fetchPage(connection.integration_key, tokens!, source.platformType, at, deps.pageSize ?? 1000);
      } catch (err) {
        // An access token that expired mid-sync (not a revoked grant): refresh once and go on.
        if (!(err instanceof PlatformAuthError) || err.revoked) throw err;
        tokens = await freshTokens(store, sealer, adapter, connection, now, { refused: tokens });
        return adapter.fetchPage(connection.integration_key, tokens, source.platformType, at, deps.pageSize ?? 1000);
      }
    };
    // One page in flight ahead: the platform prepares page N+1 while page N is written. Its
    // result (or failure) is only looked at after page N's transaction, so what is written
    // and in what order is as if the pages were fetched one after the other.
    let next = fetchPage(cursor);
    for (;;) {
      const page = await next;
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
        if (i < FIELD_SAMPLE) collectFields(record, fields);
        return recordRow(record);
      });
      fetched += rows.length;
      cursor = page.next;
      progress = page.total ? Math.min(99, Math.floor((fetched / page.total) * 100)) : Math.min(99, progress + 1);
      const lease = isoSeconds(new Date(clock.now().getTime() + LEASE_SECONDS * 1000));
      const completed = cursor ? undefined : now();
      // Store calls only: the next page's fetch was started above and is awaited after the commit.
      const replaced = await store.transaction(async (tx) => {
        await tx.upsertRecords(pull.company_id, pull.data_type, pull.generation, connection.id, rows);
        await tx.rememberFields(pull.data_type, fields);
        await tx.updatePull(pull.id, {
          status: 'Fetching', cursor: cursor ?? null, fetched, progress, lease_until: lease, attempts: 0, validation: JSON.stringify(validation),
        });
        if (!completed) return null;
        // The last page publishes its generation in the same commit (one commit a page, the last one included).
        const previous = await tx.publishGeneration(pull.company_id, pull.data_type, pull.generation, pull.id, completed);
        await tx.setLastSync(connection.id, pull.company_id, completed);
        await finish('Complete', { progress: 100, completed });
        return previous;
      });
      if (!completed) continue;
      // The old snapshot is no longer visible; remove it in small steps so readers never wait long.
      if (replaced !== null) while ((await store.pruneGenerations(pull.company_id, pull.data_type, pull.generation, PRUNE_BATCH)) > 0);
      return 'Complete';
    }
  } catch (err) {
    return handleFailure(deps, pull, connection.id, err);
  }
}

async function handleFailure(deps: SyncDeps, pull: PullRow, connectionId: string, err: unknown): Promise<PullStatus> {
  const { store, clock } = deps;
  const now = clock.now();
  const later = (seconds: number) => isoSeconds(new Date(now.getTime() + seconds * 1000));
  const attempts = pull.attempts + 1;
  /** Called inside the caller's transaction. */
  const ended = async (fields: Partial<PullRow>) => {
    await store.updatePull(pull.id, { completed: isoSeconds(now), lease_until: null, ...fields });
    await pullEnded(eventsOf(deps), pull.id);
  };
  if (err instanceof PlatformAuthError && err.revoked) {
    await store.transaction(async () => {
      await deauthorized(eventsOf(deps), connectionId, {
        statusCode: '401', statusText: 'Unauthorized', status: 'Active', erroredOnUtc: isoSeconds(now),
        errorMessage: `Reauthorization required: ${err.message}`,
      });
      await ended({
        status: 'AuthError',
        status_description: 'The platform revoked the grant; the connection is Deauthorized.', error_message: `Reauthorization required: ${err.message}`,
      });
    });
    return 'AuthError';
  }
  if (err instanceof PlatformRateLimitError) {
    if (attempts > MAX_RATE_LIMIT_RETRIES) {
      await store.transaction(() => ended({ status: 'RateLimitError', error_message: err.message }));
      return 'RateLimitError';
    }
    await store.updatePull(pull.id, { attempts, not_before: later(err.retryAfterSeconds), lease_until: null, status_description: `Waiting ${err.retryAfterSeconds}s for the platform's rate limit.` });
    return 'Fetching';
  }
  if (err instanceof PlatformFetchError || err instanceof PlatformAuthError) {
    if (attempts > MAX_FETCH_RETRIES) {
      await store.transaction(() => ended({ status: 'FetchError', error_message: err.message }));
      return 'FetchError';
    }
    await store.updatePull(pull.id, { attempts, not_before: later(2 ** attempts), lease_until: null, status_description: `Retrying after: ${err.message}` });
    return 'Fetching';
  }
  deps.onError?.(err, `pull ${pull.id}`);
  await store.transaction(() => ended({ status: 'InternalError', error_message: 'Internal error while syncing.' }));
  return 'InternalError';
}
