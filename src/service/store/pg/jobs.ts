// Jobs on PostgreSQL, as ../sqlite/jobs.ts keeps them: a company's claimable pulls leased
// together by one worker, their leases renewed and freed together, the interactive lane.
import type { AsyncStore } from '../async-store.js';
import type { JobStore } from '../store.js';
import { openByKey, type PullJob, type PullRow } from '../pulls.js';
import { rows, run, type Queryable } from './query.js';

const FREE = '(lease_until IS NULL OR lease_until <= ?) AND (not_before IS NULL OR not_before <= ?)';
/** Claimable: read from the queue's index in its order (the head), or among a company's pulls. */
const CLAIMABLE = `status IN ('Queued', 'Fetching', 'Mapping') AND ${FREE}`;
const CLAIMABLE_BY_KEY = `${openByKey('p.status')} AND ${FREE}`;

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
 */
const CLAIM_JOB = `WITH head AS (
    SELECT company_id FROM (
      SELECT company_id, priority, seq FROM pull_operations WHERE ${CLAIMABLE} ORDER BY priority DESC, seq LIMIT 200
    ) first WHERE pg_try_advisory_xact_lock(hashtextextended('ferry.job:' || company_id, 0)) ORDER BY priority DESC, seq LIMIT 1
  ), free AS (
    SELECT p.id FROM pull_operations p JOIN head ON p.company_id = head.company_id
    WHERE ${CLAIMABLE_BY_KEY} FOR NO KEY UPDATE OF p SKIP LOCKED
  ), leased AS (
    UPDATE pull_operations p SET lease_until = ?, status = CASE p.status WHEN 'Queued' THEN 'Fetching' ELSE p.status END
    FROM free WHERE p.id = free.id RETURNING p.*
  )
  SELECT leased.*, (leased.id IS NULL AND EXISTS (SELECT 1 FROM head)) AS ferry_raced
  FROM (SELECT 1) AS answer LEFT JOIN leased ON true ORDER BY leased.seq`;

/** Claims that lost their company to a claim committed just before: tried again up to this many times a call. */
const RACES = 8;

export function jobMethods(db: Queryable): Pick<AsyncStore, keyof JobStore> {
  return {
    claimJobs: async (now, until, limit) => {
      const jobs: PullJob[] = [];
      // A company lost to another claim is tried again with a fresh snapshot. No company at
      // all may be one whose claim is still under way (its advisory lock held): one more
      // try before none.
      for (let empty = 0, raced = 0; jobs.length < limit && empty < 2 && raced < RACES;) {
        const answer = await rows<PullRow & { ferry_raced: boolean }>(db, CLAIM_JOB, [now, now, now, now, until]);
        if (answer[0]?.ferry_raced) raced += 1;
        else if (answer[0]?.id == null) empty += 1;
        else jobs.push({ companyId: answer[0].company_id, lease: until, pulls: answer.map(({ ferry_raced: _, ...pull }) => pull) });
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
