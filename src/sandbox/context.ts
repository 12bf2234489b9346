// What every sandbox route needs, built once by createSandbox().
import type { Clock } from '../lib/clock.js';
import { RateLimiter } from '../lib/rate-limit.js';
import type { SandboxSettings } from './settings.js';
import type { SandboxStore } from './store.js';
import type { TokenAuthority } from './tokens.js';

export interface SandboxContext {
  store: SandboxStore;
  clock: Clock;
  tokens: TokenAuthority;
  settings: SandboxSettings;
  /** Per-tenant buckets; undefined while the rate limit is off. */
  limiter: RateLimiter | undefined;
}

export function applySettings(ctx: SandboxContext, patch: Partial<SandboxSettings>): void {
  const limitChanged = patch.rateLimit !== undefined && patch.rateLimit !== ctx.settings.rateLimit;
  Object.assign(ctx.settings, patch);
  if (limitChanged || (ctx.limiter === undefined && ctx.settings.rateLimit > 0)) {
    ctx.limiter = ctx.settings.rateLimit > 0 ? new RateLimiter(ctx.settings.rateLimit, ctx.clock) : undefined;
  }
}
