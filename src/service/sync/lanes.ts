// The interactive lane: a sync asked for one company (`ferry check`, `ferry sync ID`, a
// managed pilot) with the header `Ferry-Sync-Priority: interactive` is claimed before the
// queue's backlog (claimJobs orders by priority, then age), so it is not stuck behind
// another run's thousands of companies. An account has at most INTERACTIVE_LANE_LIMIT
// companies in the lane at once, decided under the account's lock (the queuing's
// transaction; on PostgreSQL an advisory lock per account): past it, the sync is queued
// in the ordinary, oldest-first order, and the request succeeds as it would without the
// header. Any other value of the header is refused (400).
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import type { AsyncStore } from '../store/async-store.js';

export const SYNC_PRIORITY_HEADER = 'ferry-sync-priority';
export const INTERACTIVE = 'interactive';
/** Companies of one account in the interactive lane at once. */
export const INTERACTIVE_LANE_LIMIT = 5;
/** A pull's priority in the lane (0: the ordinary queue). */
export const INTERACTIVE_PRIORITY = 1;

/** Whether the request asks for the interactive lane; 400 for any value but `interactive`. */
export function asksInteractive(request: FastifyRequest): boolean {
  const value = request.headers[SYNC_PRIORITY_HEADER];
  if (value === undefined) return false;
  if (value !== INTERACTIVE) throw errors.invalidSyncPriority(String(value));
  return true;
}

/**
 * The priority of the company's new pulls, inside the queuing's transaction: the lane's
 * when asked and the account has room (or the company is in it already), its open pulls
 * moved into it too; otherwise the ordinary queue's.
 */
export async function lanePriority(tx: AsyncStore, clientId: string, companyId: string, asked: boolean): Promise<number> {
  if (!asked) return 0;
  const inLane = await tx.interactiveCompanies(clientId);
  if (!inLane.includes(companyId) && inLane.length >= INTERACTIVE_LANE_LIMIT) return 0;
  await tx.raisePullPriority(companyId);
  return INTERACTIVE_PRIORITY;
}
