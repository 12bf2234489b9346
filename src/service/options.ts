// What createService() takes: the data dir or database, and every knob the CLI, the tests and
// the benches turn. Its own module, so the parts of the service read it without importing app.ts.
import type { CacheLimits } from '../lib/byte-lru.js';
import type { Clock } from '../lib/clock.js';
import type { TokenVerifier } from './adapters/verifier.js';
import type { StreamLimits } from './events/open-streams.js';
import type { ObserveOptions } from './observability/observe.js';
import type { LoopDeps } from './webhooks/loop.js';
import type { WebhookTargets } from './webhooks/target-policy.js';

/** Requests per second per API key, unless the options say otherwise. */
export const DEFAULT_RATE_LIMIT = 2000;

export interface ServiceOptions extends ObserveOptions {
  dataDir: string;
  /**
   * A postgres:// URL: the service runs on that PostgreSQL database, which any number of
   * instances and workers may share, instead of <data-dir>/ferry.db.
   */
  database?: string;
  /** Requests per second per API key; 0 turns rate limiting (and its headers) off. */
  rateLimit?: number;
  maintenance?: boolean;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** A file holding the token-encryption key, ahead of FERRY_SECRET_KEY and <data-dir>/secret.key (secrets.ts). */
  secretKeyFile?: string;
  verifier?: TokenVerifier;
  /**
   * Base URL of the third-party platforms (the sandbox). With it the service verifies
   * tokens with the platform, syncs and pushes; without it, only the schema is checked.
   */
  platformUrl?: string;
  /** Run the sync and push workers in their worker thread (default true with platformUrl). */
  startWorker?: boolean;
  /** Reader threads for costly list reads (default 1; 0 reads on the request thread). */
  readThreads?: number;
  /** Render threads for invoice PDFs (default 1). */
  renderThreads?: number;
  /** Byte bounds of the invoice PDF cache. */
  pdfCache?: CacheLimits;
  /** Byte bounds of the companies list response cache. */
  responseCache?: CacheLimits;
  /** Base of every link in responses (default: the address listen() binds). */
  publicUrl?: string;
  /** Build links from X-Forwarded-Proto/-Host when a proxy sends them. */
  trustProxy?: boolean;
  /** One-line notices for the person running the service (stderr in the CLI); `event` names the ones a log names (database.lost, database.back). */
  onNotice?: (message: string, event?: string) => void;
  /** Where internal errors are reported; never sent to clients. */
  onInternalError?: (err: unknown, correlationId: string) => void;
  /** Run the webhook delivery loop (default true; tests on a fake clock drive deliverOnce themselves). */
  startWebhooks?: boolean;
  /** Timeouts, backoff and concurrency of webhook deliveries (tests shorten them). */
  webhookTuning?: Omit<LoopDeps, 'store' | 'clock' | 'sealer' | 'changed' | 'onError' | 'targets'>;
  /**
   * Where webhook consumers may point and deliveries connect: public addresses only unless
   * the operator opts in (`--webhook-allow-private`, `--webhook-allow HOST[:PORT]`).
   */
  webhookTargets?: WebhookTargets;
  /** The event stream's heartbeat interval in ms (default 15 s; tests shorten it). */
  eventHeartbeatMs?: number;
  /** Caps on open event streams in this process: per key (10), per account (50), in all (half the open-file limit). */
  streamLimits?: Partial<StreamLimits>;
  /** How long a request may take to arrive in full, headers and body, before a 408 (default 60 s). */
  requestTimeoutMs?: number;
  /** Bytes of attachments each account may hold (default 1 GiB). */
  attachmentQuota?: number;
}
