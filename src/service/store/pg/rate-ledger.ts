// The shared rate limit's ledger on PostgreSQL (migration 009): the settle of
// service/shared-rate-limit.ts as one statement. It counts the instance in (rate_instances),
// refills each key's bucket from its `at` to the instance's `now` at `limit` per second,
// capped at `limit`, takes away what the instance admitted (never below -limit: a debt is
// at most one burst), and answers the buckets and the instances active within the window.
// INSERT … ON CONFLICT DO UPDATE locks each row and reads its latest committed version, so
// settles of one key from any number of processes add up; keys are written in one order
// (sorted), so two settles never deadlock. `at` only moves forward, so clocks a little
// apart between hosts never refill a bucket twice.
//
// Rows nobody settled for a minute hold full buckets again (from -limit, full within 2 s),
// the same as no row: a separate statement deletes them once a minute per instance,
// skipping rows a settle holds, so it never waits on one and never deadlocks.
import type { SettleAnswer, SettleLedger, SettleRequest } from '../../shared-rate-limit.js';
import { rows, run, type Queryable } from './query.js';

/** How long a bucket or an instance stays without a settle before it is deleted. */
export const RATE_LEDGER_STALE_MS = 60_000;

const SETTLE = `
WITH used AS (
  SELECT key, sum(used) AS used, min(since) AS since
  FROM unnest(?::text[], ?::float8[], ?::bigint[]) AS u (key, used, since) GROUP BY key
), me AS (
  INSERT INTO rate_instances (instance, seen) VALUES (?, ?::bigint)
  ON CONFLICT (instance) DO UPDATE SET seen = GREATEST(rate_instances.seen, EXCLUDED.seen)
), settled AS (
  -- A new row: the bucket was full when the instance first took from it (since), and has
  -- refilled since. An existing one: refilled from its at, less the use.
  INSERT INTO rate_ledger AS b (key, tokens, at)
  SELECT key, GREATEST(-?::float8, LEAST(?::float8, ?::float8 - used + GREATEST(0, ?::bigint - since)::float8 * ?::float8 / 1000)), ?::bigint
  FROM used ORDER BY key
  ON CONFLICT (key) DO UPDATE SET
    tokens = GREATEST(-?::float8,
      LEAST(?::float8, b.tokens + GREATEST(0, EXCLUDED.at - b.at)::float8 * ?::float8 / 1000) - (SELECT used FROM used WHERE used.key = b.key)),
    at = GREATEST(b.at, EXCLUDED.at)
  RETURNING key, tokens, at
), active AS (
  -- This statement's own upsert of the instance is not visible here: it is counted as the + 1.
  SELECT count(*)::integer + 1 AS instances FROM rate_instances WHERE seen >= ?::bigint AND instance <> ?
)
SELECT active.instances, settled.key, settled.tokens, settled.at FROM active LEFT JOIN settled ON true`;

const PRUNE = `
WITH buckets AS (
  DELETE FROM rate_ledger WHERE key IN (SELECT key FROM rate_ledger WHERE at < ?::bigint FOR UPDATE SKIP LOCKED)
)
DELETE FROM rate_instances WHERE instance IN (SELECT instance FROM rate_instances WHERE seen < ?::bigint FOR UPDATE SKIP LOCKED)`;

interface SettledRow {
  instances: number;
  key: string | null;
  tokens: number | null;
  at: number | string | null;
}

/** The settle function for SharedRateLimiter, on a pool (each settle is one statement). */
export function pgRateLedger(db: Queryable): SettleLedger {
  let prunedAt = -Infinity;
  return async (request: SettleRequest): Promise<SettleAnswer> => {
    const now = Math.round(request.now);
    const { limit } = request;
    const found = await rows<SettledRow>(db, SETTLE, [
      request.used.map((entry) => entry.key), request.used.map((entry) => entry.used), request.used.map((entry) => Math.round(entry.since)),
      request.instance, now,
      limit, limit, limit, now, limit, now,
      limit, limit, limit,
      now - request.activeWithinMs, request.instance,
    ]);
    const buckets: SettleAnswer['buckets'] = new Map();
    for (const settled of found) {
      if (settled.key !== null) buckets.set(settled.key, { tokens: Number(settled.tokens), at: Number(settled.at) });
    }
    if (now - prunedAt >= RATE_LEDGER_STALE_MS) {
      prunedAt = now;
      // Housekeeping: a prune that fails leaves rows that mean full buckets, and is tried again later.
      await run(db, PRUNE, [now - RATE_LEDGER_STALE_MS, now - RATE_LEDGER_STALE_MS]).catch(() => undefined);
    }
    return { buckets, instances: found[0]?.instances ?? 1 };
  };
}
