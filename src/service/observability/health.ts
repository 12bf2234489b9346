// Liveness and readiness, for a load balancer or an orchestrator, with no key and no data
// in the answer. /healthz: 200 while the process serves. /readyz: 200 when the store
// answers and has every migration of this build, and, where background work runs, when
// its loop is alive; from a stop's start (SIGTERM) until exit, 503 while the requests in
// flight finish; otherwise 503 with the reasons. The API serves both (before
// authentication), and so does the metrics port (metrics-server.ts) of `ferry serve` and
// `ferry worker`.
import type { FastifyInstance } from 'fastify';
import type { AsyncStore } from '../store/async-store.js';
import type { Outage } from '../outage.js';

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/** A store that takes longer than this to answer is not ready: a balancer's check must not hang on it. */
const STORE_DEADLINE_MS = 2_000;

export interface ReadinessChecks {
  store: Pick<AsyncStore, 'pendingMigrations'>;
  /** Told whether the store answered: a readiness probe is a look at the database like any other. */
  outage: Outage;
  /** What keeps the background work from running, if anything (background.ts). */
  background?: () => Promise<string[]>;
  /** Maintenance mode: every request answers 503. */
  maintenance?: () => boolean;
}

export interface ProbeAnswer {
  status: 200 | 503;
  body: { status: 'ok' | 'ready' | 'not ready'; reasons?: string[] };
}

export class Readiness {
  private draining = false;

  constructor(private readonly checks: ReadinessChecks) {}

  /** The process is stopping: not ready from now on. */
  drain(): void {
    this.draining = true;
  }

  async answer(): Promise<ProbeAnswer> {
    const reasons = await this.reasons();
    return reasons.length === 0 ? { status: 200, body: { status: 'ready' } } : { status: 503, body: { status: 'not ready', reasons } };
  }

  private async reasons(): Promise<string[]> {
    const { checks } = this;
    const reasons = [
      ...(this.draining ? ['shutting down: finishing the work in flight'] : []),
      ...(checks.maintenance?.() ? ['maintenance mode: every request answers 503'] : []),
    ];
    const [store, background] = await Promise.all([this.storeReasons(), checks.background?.() ?? []]);
    return [...reasons, ...store, ...background];
  }

  private async storeReasons(): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STORE_DEADLINE_MS)));
    try {
      const pending = await Promise.race([this.checks.store.pendingMigrations(), late]);
      if (pending === 'late') return [`the database did not answer within ${STORE_DEADLINE_MS / 1000} s`];
      this.checks.outage.back();
      return pending.length === 0 ? [] : [`the database lacks migrations of this build: ${pending.join(', ')}`];
    } catch (err) {
      return this.checks.outage.lost(err) ? ['the database cannot be reached'] : ['the database check failed'];
    } finally {
      clearTimeout(timer);
    }
  }
}

export const HEALTHY: ProbeAnswer = { status: 200, body: { status: 'ok' } };

/** GET /healthz and /readyz on the API; app.ts lets them past authentication and the rate limit. */
export function registerProbeRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', async (_request, reply) => reply.code(HEALTHY.status).header('Cache-Control', 'no-store').send(HEALTHY.body));
  app.get('/readyz', async (_request, reply) => {
    const { status, body } = await readiness.answer();
    return reply.code(status).header('Cache-Control', 'no-store').send(body);
  });
}
