// Claims, attempts and parking on PostgreSQL: the writes that move a lane along, as
// ../sqlite/webhook-deliveries.ts makes them in SQLite (its header tells lanes, heads, and the
// marks of parked deliveries); which deliveries a claim takes is ../delivery-turns.ts's.
//
// SQLite runs them one writer at a time. Here each first takes the outbox lock, an advisory
// lock held until its transaction ends, so across any number of processes they still run
// one at a time, each seeing all the last one committed: two claims never lease one
// delivery, nor two heads of one lane, and a head is never settled unseen by a claim
// parking the delivery behind it (which would then wait for good). On a transaction's
// client the lock is the caller's transaction's; on the pool, the method runs in a
// transaction of its own. Claims are short: the attempts run outside them.
//
// Deliveries are written without the lock (insertEvent, replayDelivery), so one may commit
// after a later delivery of its lane was leased. A delivery is a head only if no other of
// its lane is pending before it, or leased: the two are never in flight together.
import type { AsyncStore } from '../async-store.js';
import { BUSY_FROM, busyMark, FULL_FROM, fullMark, markEnd, planClaim, UNPARKED_PER_SETTLE, WAITING, type DueDelivery } from '../delivery-turns.js';
import type { ClaimedDelivery, InFlightIds } from '../webhook-deliveries.js';
import { rollback, row, rows, run, type Queryable } from './query.js';

type ClaimMethods = Pick<AsyncStore, 'claimDeliveries' | 'recordDeliveryAttempt' | 'releaseDeliveryLease' | 'releaseDeliveryLeases'
  | 'unparkIdle' | 'disableConsumerDeliveries'>;

/**
 * The outbox lock's key: the first 8 bytes of sha256('ferry.webhook_outbox') as a signed
 * bigint, drawn from a hash like the migrations' (migrate.ts), so it meets neither theirs
 * nor the small numbers other applications lock.
 */
export const OUTBOX_LOCK_KEY = '-2138353709667902206';

/** Runs `work` holding the outbox lock until the transaction ends: the caller's (a client), or its own (the pool). */
async function underOutboxLock<T>(db: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const lock = (tx: Queryable) => run(tx, 'SELECT pg_advisory_xact_lock(?::bigint)', [OUTBOX_LOCK_KEY]);
  if (!('totalCount' in db)) {
    await lock(db);
    return work(db);
  }
  const client = await db.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await lock(client);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    broken = await rollback(client, err);
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The other pending deliveries of `d`'s lane that make it wait: one before it, or one leased at the first `?` (now). */
const laneBlocks = (nullCompany: boolean) => `EXISTS (SELECT 1 FROM webhook_deliveries o
  WHERE o.consumer_id = d.consumer_id AND ${nullCompany ? 'o.company_id IS NULL' : 'o.company_id = d.company_id'}
    AND o.status = 'Pending' AND o.seq <> d.seq AND (o.seq < d.seq OR o.lease_until > ?))`;

// Written per case rather than with IS NOT DISTINCT FROM, which no index serves.
const DUE = `SELECT d.seq, d.consumer_id, c.client_id, c.disabled,
    CASE WHEN d.company_id IS NULL THEN ${laneBlocks(true)} ELSE ${laneBlocks(false)} END AS blocked
  FROM webhook_deliveries d JOIN webhook_consumers c ON c.id = d.consumer_id
  WHERE d.status = 'Pending' AND d.next_attempt <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
  ORDER BY d.next_attempt, d.seq LIMIT ?`;

const PARK = 'UPDATE webhook_deliveries d SET next_attempt = p.mark FROM unnest(?::bigint[], ?::text[]) AS p (seq, mark) WHERE d.seq = p.seq';

// Leased only if still free (the lock makes it so; the condition says it), in the order claimed.
const LEASE = `WITH l AS (
    UPDATE webhook_deliveries SET lease_until = ?
    WHERE seq = ANY (?::bigint[]) AND status = 'Pending' AND (lease_until IS NULL OR lease_until <= ?)
    RETURNING seq, id, consumer_id, company_id, attempts, first_failure, event_seq
  )
  SELECT l.seq, l.id, l.consumer_id, c.client_id, l.company_id, l.attempts, l.first_failure, e.id AS event_id, e.event_type, e.body, c.url, c.secret
  FROM l JOIN events e ON e.seq = l.event_seq JOIN webhook_consumers c ON c.id = l.consumer_id
  ORDER BY array_position(?::bigint[], l.seq)`;

/** The delivery's update (`set`, then `WHERE seq = ?`) and its attempt, numbered after the last, in one statement. */
const attemptStatement = (set: string) => `WITH d AS (
    UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = NULL, ${set} WHERE seq = ?
    RETURNING seq, consumer_id, company_id, attempts
  ), a AS (
    INSERT INTO webhook_attempts (delivery_seq, attempt, at, status_code, error, latency_ms)
    SELECT d.seq, d.attempts, ?::text, ?::integer, ?::text, ?::integer FROM d
  )
  SELECT d.consumer_id, c.client_id, d.company_id FROM d JOIN webhook_consumers c ON c.id = d.consumer_id`;
const RETRY = attemptStatement('next_attempt = ?, first_failure = coalesce(first_failure, ?)');
const SETTLE = attemptStatement('status = ?, completed = ?');

/** A slot of the consumer and of its account is free: heads parked for want of one are due again, oldest first. */
async function unparkSlots(db: Queryable, slot: { consumer_id: string; client_id: string }): Promise<void> {
  await run(db, `UPDATE webhook_deliveries SET next_attempt = created
    WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt = ? ORDER BY seq LIMIT ${UNPARKED_PER_SETTLE})
       OR seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt = ? ORDER BY seq LIMIT ${UNPARKED_PER_SETTLE})`,
  [busyMark(slot.consumer_id), fullMark(slot.client_id)]);
}

/** Makes a lane's new head due, if it was parked behind the one just settled. */
async function unparkLane(db: Queryable, consumerId: string, companyId: string | null): Promise<void> {
  await run(db, `UPDATE webhook_deliveries SET next_attempt = created
    WHERE seq = (SELECT min(seq) FROM webhook_deliveries WHERE consumer_id = ? AND ${companyId === null ? 'company_id IS NULL' : 'company_id = ?'} AND status = 'Pending')
      AND next_attempt = ? AND EXISTS (SELECT 1 FROM webhook_consumers WHERE id = ? AND disabled = 0)`,
  [consumerId, ...(companyId === null ? [] : [companyId]), WAITING, consumerId]);
}

async function unparkIdle(db: Queryable, inFlight: InFlightIds): Promise<void> {
  const idle = (from: string) => `(next_attempt > '${from}' AND next_attempt < '${markEnd(from)}' AND substr(next_attempt, ${from.length + 1}) <> ALL (?::text[]))`;
  await run(db, `UPDATE webhook_deliveries SET next_attempt = created WHERE status = 'Pending' AND (${idle(BUSY_FROM)} OR ${idle(FULL_FROM)})`,
    [inFlight.consumers, inFlight.accounts]);
}

export function claimMethods(db: Queryable): ClaimMethods {
  return {
    /**
     * Takes up to `limit` lane heads that are due, accounts and consumers in turn, leasing
     * them until `leaseUntil`; parks the deliveries found queued behind their heads, those
     * of disabled consumers, and those that must wait for a slot or a breaker.
     */
    claimDeliveries: (request) => underOutboxLock(db, async (tx) => {
      const scanLimit = request.scanLimit ?? 500;
      const due = await rows<DueDelivery>(tx, DUE, [request.now, request.now, request.now, request.now, scanLimit]);
      const plan = planClaim(due, request);
      if (plan.park.length > 0) await run(tx, PARK, [plan.park.map((p) => p.seq), plan.park.map((p) => p.at)]);
      const leased = plan.lease;
      const claimed = leased.length === 0 ? [] : await rows<ClaimedDelivery>(tx, LEASE, [request.leaseUntil, leased, request.now, leased]);
      return { claimed, more: due.length === scanLimit || leased.length >= request.limit };
    }),
    /** Records one attempt and what it made of the delivery, and frees its lease. False when the delivery is gone. */
    recordDeliveryAttempt: (seq, attempt, outcome) => underOutboxLock(db, async (tx) => {
      const tried = [attempt.at, attempt.status_code, attempt.error, attempt.latency_ms];
      type Lane = { consumer_id: string; client_id: string; company_id: string | null };
      const lane = outcome.status === 'Pending'
        ? await row<Lane>(tx, RETRY, [outcome.nextAttempt, outcome.firstFailure, seq, ...tried])
        : await row<Lane>(tx, SETTLE, [outcome.status, outcome.completed, seq, ...tried]);
      if (!lane) return false;
      if (outcome.status !== 'Pending') await unparkLane(tx, lane.consumer_id, lane.company_id);
      await unparkSlots(tx, lane);
      return true;
    }),
    /** Frees a lease without an attempt (the attempt was cut off by a stop): the delivery is due again. */
    releaseDeliveryLease: (seq) => underOutboxLock(db, async (tx) => {
      const released = await row<{ consumer_id: string; client_id: string }>(tx, `UPDATE webhook_deliveries d SET lease_until = NULL
        FROM webhook_consumers c WHERE d.seq = ? AND c.id = d.consumer_id RETURNING d.consumer_id, c.client_id`, [seq]);
      if (released) await unparkSlots(tx, released);
    }),
    /**
     * Every lease, and every head parked for want of a slot: for when no delivery loop is
     * running against this database but the caller's (a killed one left them).
     */
    releaseDeliveryLeases: () => underOutboxLock(db, async (tx) => {
      await run(tx, "UPDATE webhook_deliveries SET lease_until = NULL WHERE status = 'Pending' AND lease_until IS NOT NULL");
      await unparkIdle(tx, { consumers: [], accounts: [] });
    }),
    /** Heads parked for want of a slot, of consumers and accounts with nothing in flight: the loop's safety net when idle. */
    unparkIdle: (inFlight) => underOutboxLock(db, (tx) => unparkIdle(tx, inFlight)),
    /** Disables the consumer (false if it already was) and parks its pending deliveries: nothing more is sent to it. */
    disableConsumerDeliveries: (consumerId, reason) => underOutboxLock(db, async (tx) => {
      const changed = await run(tx, 'UPDATE webhook_consumers SET disabled = 1, disabled_reason = ? WHERE id = ? AND disabled = 0', [reason, consumerId]);
      await run(tx, "UPDATE webhook_deliveries SET next_attempt = ? WHERE consumer_id = ? AND status = 'Pending'", [WAITING, consumerId]);
      return changed > 0;
    }),
  };
}
