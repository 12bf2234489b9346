// The knobs tests turn at runtime (PATCH /admin/settings) and createSandbox() sets at
// start: latency, fault rate, per-tenant rate limit, and how pushes answer.
import { fail, type FieldError } from './errors.js';

export type PushMode = 'sync' | 'async';

export interface SandboxSettings {
  /** Added to every platform request, in milliseconds. */
  latencyMs: number;
  /** Fraction (0..1) of platform requests answered 500 or 503. The token endpoint is exempt, so a rotation is never lost in flight. */
  faultRate: number;
  /** Requests per second per tenant (burst of the same size); 0 turns the limit off. */
  rateLimit: number;
  /** sync: pushes answer 200 or 400 at once. async: pushes answer 202 and settle later. */
  pushMode: PushMode;
  /** How long, by the sandbox clock, an async push stays Pending. */
  pushDelaySeconds: number;
}

export const DEFAULT_SETTINGS: SandboxSettings = {
  latencyMs: 0,
  faultRate: 0,
  rateLimit: 60,
  pushMode: 'sync',
  pushDelaySeconds: 5,
};

const RULES: Record<keyof SandboxSettings, (v: unknown) => boolean> = {
  latencyMs: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 60_000,
  faultRate: (v) => typeof v === 'number' && v >= 0 && v <= 1,
  rateLimit: (v) => Number.isInteger(v) && (v as number) >= 0,
  pushMode: (v) => v === 'sync' || v === 'async',
  pushDelaySeconds: (v) => typeof v === 'number' && v >= 0 && v <= 86_400,
};

const EXPECTED: Record<keyof SandboxSettings, string> = {
  latencyMs: 'an integer from 0 to 60000',
  faultRate: 'a number from 0 to 1',
  rateLimit: 'a non-negative integer (0 turns it off)',
  pushMode: "'sync' or 'async'",
  pushDelaySeconds: 'a number of seconds from 0 to 86400',
};

/** Checks a partial settings object; unknown keys and bad values are 400 with one error each. */
export function parseSettings(input: Record<string, unknown>): Partial<SandboxSettings> {
  const errors: FieldError[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const rule = RULES[key as keyof SandboxSettings] as ((v: unknown) => boolean) | undefined;
    if (!rule) errors.push({ field: key, message: `${key} is not a setting; expected ${Object.keys(RULES).join(', ')}` });
    else if (!rule(value)) errors.push({ field: key, message: `${key} must be ${EXPECTED[key as keyof SandboxSettings]}` });
    else out[key] = value;
  }
  if (errors.length > 0) throw fail.badRequest(`The settings are not valid: ${errors.map((e) => e.message).join('; ')}.`, errors);
  return out as Partial<SandboxSettings>;
}
