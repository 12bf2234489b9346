// Types of latency-proxy.mjs for the TypeScript tests (the JSDoc there is the reference).

export interface RateLimitOptions {
  /** Tokens added per second (may be a fraction). */
  perSecond: number;
  /** The bucket's size (default: perSecond, as the service's bucket). */
  burst?: number;
  /** Send X-Rate-Limit-Limit/-Remaining/-Reset on every answer; false strips the upstream's too. */
  headers: boolean;
}

export interface FaultOptions {
  /** Share of admitted requests that fail (0..1). */
  rate: number;
  /** The faults to pick from, evenly: a reset without an answer, or a 503 with Retry-After: 1. */
  kinds: Array<'reset' | '503'>;
  seed: number;
}

export interface LatencyProxyOptions {
  /** The upstream's base URL, e.g. http://127.0.0.1:PORT. */
  target: string;
  delayMs?: number;
  rateLimit?: RateLimitOptions;
  faults?: FaultOptions;
}

export interface LatencyProxyStats {
  requests: number;
  answered429: number;
  faults: number;
  resets: number;
  forwarded: number;
  /** Answers sent, by status code (the proxy's own included). */
  byStatus: Record<string, number>;
  firstAt: number | undefined;
  lastAt: number | undefined;
}

export interface LatencyProxy {
  url: string;
  stats(): LatencyProxyStats;
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export function startLatencyProxy(options: LatencyProxyOptions): Promise<LatencyProxy>;
