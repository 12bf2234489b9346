// Which of the due deliveries a claim takes, and which it parks: the same on SQLite and on
// PostgreSQL (each store reads the due rows and carries out the plan).
//
// Accounts take turns: the account with the fewest attempts in flight goes first, then
// one delivery per account per round. No account holds more than its share of the loop's
// slots: min(cap, slots / (accounts with work + 1)), so a share stays free for an account
// that has nothing in flight yet. Within an account its consumers take turns the same way,
// each up to its own limit (one while its circuit breaker is on trial). A consumer whose
// breaker is open has its due heads parked until the breaker lets a trial through.

/** What a claim asks for (the webhook loop's), on either store. */
export interface ClaimRequest {
  now: string;
  leaseUntil: string;
  /** Deliveries to take at most. */
  limit: number;
  /** Attempts one consumer may have in flight. */
  perConsumer: number;
  /** Attempts in flight now, by consumer (a consumer at perConsumer has its due heads parked until one settles). */
  busy: Record<string, number>;
  /**
   * The loop's slots, shared between accounts (planClaim below): at most `cap` each, fewer
   * when more accounts have work. `busy`: attempts in flight now, by account (client id).
   * Without it, accounts are not bounded.
   */
  accounts?: { cap: number; slots: number; busy: Record<string, number> };
  /** Consumers whose circuit breaker is open, with the time it lets a trial through: their due heads are parked until then. */
  paused?: Record<string, string>;
  /** Consumers whose breaker lets a trial through: one attempt in flight at a time. */
  trials?: string[];
  /** Due rows to look at in this call, so one claim stays a short transaction. */
  scanLimit?: number;
}

/** A due delivery as the claim sees it. */
export interface DueDelivery {
  seq: number;
  consumer_id: string;
  client_id: string;
  disabled: number;
  /** Another delivery of its lane comes first (or is in flight). */
  blocked: number | boolean;
}

export interface ClaimPlan {
  /** In the order taken. */
  lease: number[];
  /** Each with the next_attempt it is parked at (a marker, or the time a breaker reopens). */
  park: Array<{ seq: number; at: string }>;
}

/** next_attempt of a delivery waiting for the one before it in its lane (or for a disabled consumer). */
export const WAITING = '9999-12-31T23:59:59Z';
// Heads waiting for a slot sort after WAITING (and after every time). Both prefixes are five
// characters long: the stores read the id back with substr(next_attempt, 6).
/** A lane head waiting for one of its consumer's attempts in flight to settle. */
export const BUSY_FROM = 'BUSY:';
/** A lane head waiting for one of its account's attempts in flight to settle (the account is at its share). */
export const FULL_FROM = 'FULL:';
export const busyMark = (consumerId: string) => `${BUSY_FROM}${consumerId}`;
/** Just after every marker that starts with `prefix` (';' follows ':'). */
export const markEnd = (prefix: string) => `${prefix.slice(0, -1)};`;
/**
 * Parked heads made due again by each attempt that settles: one to take its slot, and one
 * more in case the limit grew meanwhile (a breaker closed, fewer accounts have work), so
 * a consumer or an account grows back into it; parked again if not.
 */
export const UNPARKED_PER_SETTLE = 2;
export const fullMark = (clientId: string) => `${FULL_FROM}${clientId}`;

/** The most attempts one account may have in flight now, with `accounts` of them having work. */
export function accountShare(cap: number, slots: number, accounts: number): number {
  return Math.max(1, Math.min(cap, Math.floor(slots / (accounts + 1))));
}

interface Turn {
  clientId: string;
  held: number;
  /** Its candidates, consumers taking turns. */
  queue: DueDelivery[];
}

export function planClaim(due: DueDelivery[], request: ClaimRequest): ClaimPlan {
  const park: ClaimPlan['park'] = [];
  const lease: number[] = [];
  const candidates: DueDelivery[] = [];
  for (const row of due) {
    const pausedUntil = request.paused?.[row.consumer_id];
    if (row.blocked || row.disabled) park.push({ seq: row.seq, at: WAITING });
    else if (pausedUntil !== undefined && pausedUntil > request.now) park.push({ seq: row.seq, at: pausedUntil });
    else candidates.push(row);
  }

  const taken = new Map(Object.entries(request.busy));
  const trials = new Set(request.trials ?? []);
  const limitOf = (consumerId: string) => (trials.has(consumerId) ? 1 : request.perConsumer);
  const accountsBusy = request.accounts?.busy ?? {};
  const turns = new Map<string, Turn>();
  // A consumer's n-th candidate ranks after every consumer's (n-1)-th, counting what each has in flight.
  const rank = new Map<DueDelivery, number>();
  const seen = new Map<string, number>();
  for (const row of candidates) {
    const n = seen.get(row.consumer_id) ?? taken.get(row.consumer_id) ?? 0;
    seen.set(row.consumer_id, n + 1);
    rank.set(row, n);
    let turn = turns.get(row.client_id);
    if (!turn) turns.set(row.client_id, turn = { clientId: row.client_id, held: accountsBusy[row.client_id] ?? 0, queue: [] });
    turn.queue.push(row);
  }
  for (const turn of turns.values()) turn.queue.sort((a, b) => rank.get(a)! - rank.get(b)!);
  const working = new Set([...turns.keys(), ...Object.keys(accountsBusy).filter((id) => accountsBusy[id]! > 0)]).size;
  const share = request.accounts ? accountShare(request.accounts.cap, request.accounts.slots, working) : Infinity;
  // Fewest in flight first; a stable sort keeps the oldest due first among equals.
  const order = [...turns.values()].sort((a, b) => a.held - b.held);

  const next = (turn: Turn): DueDelivery | undefined => {
    for (let row = turn.queue.shift(); row; row = turn.queue.shift()) {
      if ((taken.get(row.consumer_id) ?? 0) < limitOf(row.consumer_id)) return row;
      park.push({ seq: row.seq, at: busyMark(row.consumer_id) });
    }
    return undefined;
  };
  let progress = true;
  while (progress && lease.length < request.limit) {
    progress = false;
    for (const turn of order) {
      if (lease.length >= request.limit) break;
      if (turn.held >= share) continue;
      const row = next(turn);
      if (!row) continue;
      lease.push(row.seq);
      turn.held += 1;
      taken.set(row.consumer_id, (taken.get(row.consumer_id) ?? 0) + 1);
      progress = true;
    }
  }
  // What an account at its share could not take waits for one of its attempts to settle;
  // what the limit left is still due (the loop claims again).
  for (const turn of order) {
    if (turn.held < share) continue;
    for (const row of turn.queue) park.push({ seq: row.seq, at: fullMark(turn.clientId) });
  }
  return { lease, park };
}
