// Jobs on PostgreSQL, as ../sqlite/jobs.ts keeps them: a company's claimable pulls leased
// together by one worker, their leases renewed and freed together, the interactive lane.
import type { AsyncStore } from '../async-store.js';
import type { JobStore } from '../store.js';
import { openByKey, type PullJob, type PullRow } from '../pulls.js';
import { rows, run, type Queryable } from './query.js';

const FREE = '(lease_until IS NULL OR lease_until <= ?) AND (not_before IS NULL OR not_before <= ?)';
/** Open, as the queue's partial index (pull_operations_queue) says it, so that a read of the queue can use it. */
const OPEN = "status IN ('Queued', 'Fetching', 'Mapping')";
/** Claimable: read from the queue's index in its order (the head), or among a company's pulls. */
const CLAIMABLE = `${OPEN} AND ${FREE}`;
const CLAIMABLE_BY_KEY = `${openByKey('p.status')} AND ${FREE}`;

/** The head of one lane: its first claimable pull whose company no other claim is leasing. */
const laneHead = (lane: string, order: string) => `(SELECT company_id FROM (
      SELECT company_id, priority, seq FROM pull_operations WHERE ${CLAIMABLE} AND ${lane} ORDER BY ${order} LIMIT 200
    ) first WHERE pg_try_advisory_xact_lock(hashtextextended('ferry.job:' || company_id, 0)) ORDER BY ${order} LIMIT 1)`;

/**
 * One job: the company of the first claimable pull (the interactive lane first, then the
 * oldest) and every claimable pull of it, leased in one statement. The queue's first
 * pulls are read in order, and the first whose company no other claim is leasing (an
 * advisory lock, held to this statement's commit, taken row by row in that order) names
 * the company; its pulls another claim has locked are skipped, not waited for. Workers
 * claiming at once so take other companies each, where a plain read would give them all
 * the same one. A company another claim leased and committed after this statement's
 * snapshot was read still looks claimable here, and its pulls, read again as they are now,
 * are not: the answer is then one row of NULLs with `ferry_raced`, and the claim tries again.
 * The oldest lane is read from a floor (QueueFloor): the interactive lane's head is looked
 * for first, and the other lane's only when it has none (COALESCE evaluates it only then).
 * The answer also gives the oldest lane's first open pull from the floor on, `ferry_floor`:
 * where the next claim reads from.
 */
const CLAIM_JOB = `WITH head AS (
    SELECT COALESCE(${laneHead('priority > 0', 'priority DESC, seq')}, ${laneHead('priority = 0 AND seq >= ?', 'seq')}) AS company_id
  ), free AS (
    SELECT p.id FROM pull_operations p JOIN head ON p.company_id = head.company_id
    WHERE ${CLAIMABLE_BY_KEY} FOR NO KEY UPDATE OF p SKIP LOCKED
  ), leased AS (
    UPDATE pull_operations p SET lease_until = ?, status = CASE p.status WHEN 'Queued' THEN 'Fetching' ELSE p.status END
    FROM free WHERE p.id = free.id RETURNING p.*
  )
  SELECT leased.*, (leased.id IS NULL AND EXISTS (SELECT 1 FROM head WHERE company_id IS NOT NULL)) AS ferry_raced,
    (SELECT seq FROM pull_operations WHERE ${OPEN} AND priority = 0 AND seq >= ? ORDER BY priority DESC, seq LIMIT 1) AS ferry_floor
  FROM (SELECT 1) AS answer LEFT JOIN leased ON true ORDER BY leased.seq`;

/** Claims that lost their company to a claim committed just before: tried again up to this many times a call. */
const RACES = 8;

/** How often a claim reads the oldest lane from its start, whatever the floor. */
export const FULL_LOOK_MS = 1_000;

/**
 * Where the oldest lane's claims begin reading: its first open pull, as the last claim
 * saw it. The queue's index keeps an entry for every version of a pull that was open
 * until a vacuum removes it, and those entries lie before the head, so reading from the
 * start walked all of them: 4.6 ms a claim at 10,000 companies with autovacuum off. No
 * pull below the floor is open, and none opens again (a pull ends once; a sync queues new
 * ones, with higher seqs; priority only rises), so the claims' order is unchanged. One
 * exception: a pull queued by a transaction that committed after a later one's, its seq
 * below the floor. The read from the start that comes at least every FULL_LOOK_MS, and
 * whenever the read from the floor finds nothing, takes it in.
 */
export interface QueueFloor {
  seq: number;
  /** performance.now() of the last read from the start. */
  lookedAt: number;
}

export const newQueueFloor = (): QueueFloor => ({ seq: 0, lookedAt: -Infinity });

/** The store's floor is shared by the pool and every client of it (pg-store.ts). */
export function jobMethods(db: Queryable, floor: QueueFloor): Pick<AsyncStore, keyof JobStore> {
  return {
    claimJobs: async (now, until, limit) => {
      const jobs: PullJob[] = [];
      // A company lost to another claim is tried again with a fresh snapshot. No company at
      // all may be one whose claim is still under way (its advisory lock held): one more
      // try before none. Nothing found is looked for again from the start of the lane.
      for (let empty = 0, raced = 0; jobs.length < limit && empty < 2 && raced < RACES;) {
        const fromStart = floor.seq === 0 || performance.now() - floor.lookedAt >= FULL_LOOK_MS;
        if (fromStart) floor.lookedAt = performance.now();
        const from = fromStart ? 0 : floor.seq;
        const answer = await rows<PullRow & { ferry_raced: boolean; ferry_floor: number | null }>(db, CLAIM_JOB, [now, now, now, now, from, now, now, until, from]);
        const first = answer[0];
        if (first?.ferry_floor != null) floor.seq = first.ferry_floor;
        if (first?.ferry_raced) raced += 1;
        else if (first?.id == null) {
          if (fromStart) empty += 1;
          floor.lookedAt = -Infinity; // the next try reads from the start
        } else jobs.push({ companyId: first.company_id, lease: until, pulls: answer.map(({ ferry_raced: _r, ferry_floor: _f, ...pull }) => pull) });
      }
      return jobs;
    },
    renewPullLeases: async (ids, lease, until) => (ids.length === 0 ? [] : (await rows<{ id: string }>(db, `UPDATE pull_operations SET lease_until = ?
      WHERE id = ANY(?::text[]) AND lease_until = ? AND ${openByKey()} RETURNING id`, [until, ids, lease])).map((r) => r.id)),
    releasePullLeases: async (ids, lease) => {
      if (ids.length > 0) await run(db, `UPDATE pull_operations SET lease_until = NULL WHERE id = ANY(?::text[]) AND lease_until = ?
        AND ${openByKey()}`, [ids, lease]);
    },
    interactiveCompanies: async (clientId) => (await rows<{ company_id: string }>(db, `SELECT DISTINCT p.company_id FROM pull_operations p
      JOIN companies c ON c.id = p.company_id WHERE p.priority > 0 AND p.status IN ('Queued', 'Fetching', 'Mapping') AND c.client_id = ?`, [clientId]))
      .map((r) => r.company_id),
    raisePullPriority: async (companyId) => {
      await run(db, `UPDATE pull_operations SET priority = 1 WHERE company_id = ? AND priority = 0 AND ${openByKey()}`, [companyId]);
    },
  };
}
