// The shapes of the end-to-end check (engine.ts): what it is asked, what it needs, and
// what it finds, criterion by criterion (criteria.ts).
import type { SandboxApi } from '../../client/sandbox-api.js';
import type { ApiClient } from '../../client/client.js';
import type { ChangeFeed } from '../../client/change-feed.js';
import type { WireIntegration } from '../../client/wire.js';

export type CriterionName = 'connection' | 'sync' | 'authorization' | 'reads';
export type CriterionStatus = 'pass' | 'fail' | 'skipped';

export interface Criterion {
  name: CriterionName;
  status: CriterionStatus;
  /** One line: what was found. */
  summary: string;
  /** Statuses, counts, timings: what the summary is based on. */
  evidence: Record<string, unknown>;
}

export interface CheckTarget {
  companyId: string;
  /** Check this platform's connection (default: every connection of the company). */
  platformKey?: string;
  /** The sandbox tenant behind the connection (a managed migration's externalId). Default: the company's ferryKey tag. */
  tenantId?: string;
  /** Legacy refreshes at or after this time fail the check; default: when the connection was created (migrated). */
  legacySince?: { at: string; what: string };
}

export interface CheckOptions {
  /** Queue a fresh sync and wait for it (default); false judges the data sets as they are. */
  sync: boolean;
  timeoutMs: number;
  /** First poll delay (ms). */
  pollMs?: number;
  signal: AbortSignal;
  /** Times a data type whose pull failed transiently (InternalError, FetchError, RateLimitError) is queued again. */
  retries?: number;
}

export interface CheckDeps {
  client: ApiClient;
  /** The platform's admin surface where there is one (the sandbox). */
  sandbox?: SandboxApi;
  /** GET /integrations/KEY, cached by the caller across companies. */
  integration(key: string): Promise<WireIntegration>;
  /** The run's event feed (SYNC_EVENTS), one for every company: a fresh sync's end is noticed at once. Without it the check polls. */
  changes?: ChangeFeed;
}

export interface CheckResult {
  companyId: string;
  companyName?: string;
  platformKey?: string;
  connectionId?: string;
  verdict: 'pass' | 'fail';
  /** Why it failed, one line each (empty when it passed). */
  reasons: string[];
  criteria: Criterion[];
  startedAt: string;
  finishedAt: string;
  seconds: number;
  /** From queuing the fresh sync to its last data type finishing. */
  syncSeconds?: number;
  /** Records across every data type read (totalResults). */
  records?: number;
}
