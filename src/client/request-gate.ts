// What the client asks of whatever paces a command run's requests (adaptive-limit.ts, when
// one is attached with useGate): a ticket before each attempt, and how the attempt ended.
// Its own module so that the client and the limit both stand on it, not on each other.

/**
 * The command run's adaptive limit (adaptive-limit.ts), when one is attached: every attempt
 * waits for its rate cap and tells it how it ended.
 */
export interface RequestGate {
  admit(signal?: AbortSignal): Promise<AttemptTicket>;
  /** `request` is the same object for every attempt of one request. */
  answered(ticket: AttemptTicket, request: object, outcome: AttemptOutcome): void;
}

/** Handed out by admit() for one attempt; given back with its outcome. */
export interface AttemptTicket {
  readonly sentAt: number;
}

export interface AttemptOutcome {
  /** The HTTP status, if an answer came. */
  status?: number;
  retryAfterSeconds?: number;
  /** No answer within the client's timeout. */
  timedOut?: boolean;
}
