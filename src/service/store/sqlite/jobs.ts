// Jobs: a company's claimable pulls leased together by one worker (sync/job.ts), their
// leases renewed and freed together, and the interactive lane that is claimed first
// (sync/lanes.ts). A lease is a pull's lease_until, its token as in pulls.ts.
import type { Db } from './db.js';
import { prepared } from './statements.js';
import type { PullJob, PullRow } from '../pulls.js';

/** An open pull whose lease is free at `now` and whose retry time has come (parameters: now, now). */
const CLAIMABLE = `status IN ('Queued', 'Fetching', 'Mapping') AND (lease_until IS NULL OR lease_until <= ?) AND (not_before IS NULL OR not_before <= ?)`;

/**
 * Leases the jobs at the queue's head, one company each: the company of the first
 * claimable pull (the interactive lane first, then the oldest), and every claimable pull of
 * it, under one lease. The head is looked at before the transaction, so an idle worker
 * never takes the write lock; each lease is conditional, so pulls another connection took
 * meanwhile are left out.
 */
export function claimJobs(db: Db, now: string, until: string, limit: number): PullJob[] {
  // The queue's index, named: without statistics SQLite would sort every open pull instead.
  const head = prepared(db, `SELECT company_id FROM pull_operations INDEXED BY pull_operations_queue WHERE ${CLAIMABLE} ORDER BY priority DESC, seq LIMIT 1`);
  if (limit <= 0 || head.get(now, now) === undefined) return [];
  const lease = prepared(db, `UPDATE pull_operations SET lease_until = ?, status = CASE status WHEN 'Queued' THEN 'Fetching' ELSE status END
                       WHERE company_id = ? AND ${CLAIMABLE} RETURNING *`);
  return db.transaction(() => {
    const jobs: PullJob[] = [];
    while (jobs.length < limit) {
      const next = head.get(now, now) as { company_id: string } | undefined;
      if (!next) break;
      const pulls = (lease.all(until, next.company_id, now, now) as PullRow[]).sort((a, b) => a.seq - b.seq);
      jobs.push({ companyId: next.company_id, lease: until, pulls });
    }
    return jobs;
  }).immediate();
}

/** Moves the lease of those of `ids` still held by `lease` to `until`; answers the ids renewed. */
export function renewPullLeases(db: Db, ids: string[], lease: string, until: string): string[] {
  if (ids.length === 0) return [];
  return prepared(db, `UPDATE pull_operations SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND lease_until = ?
                       AND status IN ('Queued', 'Fetching', 'Mapping') RETURNING id`).pluck().all(until, JSON.stringify(ids), lease) as string[];
}

/** Frees the lease of those of `ids` still held by `lease`: any worker may take them at once. */
export function releasePullLeases(db: Db, ids: string[], lease: string): void {
  if (ids.length === 0) return;
  prepared(db, `UPDATE pull_operations SET lease_until = NULL WHERE id IN (SELECT value FROM json_each(?)) AND lease_until = ?
                AND status IN ('Queued', 'Fetching', 'Mapping')`).run(JSON.stringify(ids), lease);
}

/** The account's companies with an open pull in the interactive lane. */
export function interactiveCompanies(db: Db, clientId: string): string[] {
  return prepared(db, `SELECT DISTINCT p.company_id FROM pull_operations p INDEXED BY pull_operations_queue JOIN companies c ON c.id = p.company_id
                       WHERE p.priority > 0 AND p.status IN ('Queued', 'Fetching', 'Mapping') AND c.client_id = ?`).pluck().all(clientId) as string[];
}

/** Moves the company's open pulls into the interactive lane. */
export function raisePullPriority(db: Db, companyId: string): void {
  prepared(db, `UPDATE pull_operations SET priority = 1 WHERE company_id = ? AND priority = 0 AND status IN ('Queued', 'Fetching', 'Mapping')`).run(companyId);
}
