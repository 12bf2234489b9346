// What every route needs, built once by createService().
import type { Clock } from '../lib/clock.js';
import type { EventBus } from './events/bus.js';
import type { ResponseCache } from './http/response-cache.js';
import type { ReadPool } from './read-pool/pool.js';
import type { RenderPool } from './documents/render-pool.js';
import type { PlatformAdapter } from './adapters/adapter.js';
import type { TokenVerifier } from './adapters/verifier.js';
import type { Signals } from './observability/signals.js';
import type { Sealer } from './secrets.js';
import type { AsyncStore } from './store/async-store.js';
import type { TargetPolicy } from './webhooks/target-policy.js';

export interface ServiceContext {
  store: AsyncStore;
  clock: Clock;
  sealer: Sealer;
  verifier: TokenVerifier;
  /** The third-party platforms, when the service has them (the sandbox, or real adapters). */
  platform?: PlatformAdapter;
  /** Their base URL (the sandbox's), told to admins so sandbox commands can reach it. */
  platformUrl?: string;
  /** Serialised list pages, bounded in bytes; kept here so tests and benches can read its size. */
  responseCache: ResponseCache;
  /** List pages: costly ones run in reader threads, clients taking turns. */
  reads: ReadPool;
  /** Invoice PDFs: drawn in a render thread, clients taking turns, and cached until their record changes. */
  renders: RenderPool;
  /** Tells the sync worker there is new work, so it need not wait for its next poll. */
  wakeWorker(): void;
  /** Tells the stream and the webhook deliveries that events were committed. */
  events: EventBus;
  /** Tells the webhook delivery loop there is work that no event announced (a replay). */
  wakeDeliveries(): void;
  /** Where webhook consumers may point (public addresses unless the operator opted in to more). */
  webhookTargets: TargetPolicy;
  /** Bytes of attachments each account may hold. */
  attachmentQuota: number;
  /** Where uploads are staged as they arrive (<data-dir>/uploads), on the data dir's file system. */
  uploadDir: string;
  /** What the work tells the operator's metrics and log (observability/signals.ts). */
  signals: Signals;
}
