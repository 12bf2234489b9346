// Sandbox tenants in any number: calls of at most the sandbox's per-call maximum, a couple
// in flight, each batch handed on in order as it arrives, so the caller can stream it out
// and hold no more than a few batches at once.
import type { IssuedTenant, SandboxApi } from '../../client/sandbox-api.js';

/** The most POST /admin/tenants takes in one call (the sandbox's own limit). */
export const TENANTS_PER_CALL = 1000;
/** The most one command makes: a CSV of this many is a few tens of MB. */
export const MAX_TENANTS = 100_000;
/** Two calls overlap the sandbox's work on one batch with the transfer of the other; more only queue behind it. */
const IN_FLIGHT = 2;

export interface CreateTenantsInput {
  platform: string;
  count: number;
  invoices?: number;
  /** The first tenant's seed; tenant k gets seed + k (mod 2^32), as one call would give it. */
  seed: number;
  signal?: AbortSignal;
  /** Tenants per call (default TENANTS_PER_CALL). */
  perCall?: number;
}

/**
 * Stopped before every tenant was handed on: by `cause` (an error, or the signal). The
 * `created` tenants exist in the sandbox, handed on or not.
 */
export class TenantsStoppedError extends Error {
  constructor(readonly created: number, readonly total: number, readonly interrupted: boolean, cause?: unknown) {
    super(interrupted ? 'Interrupted.' : cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'TenantsStoppedError';
  }
}

/** Creates the tenants batch by batch; `onBatch` gets each batch in seed order. Returns how many were created. */
export async function createTenants(
  sandbox: Pick<SandboxApi, 'createTenants'>,
  input: CreateTenantsInput,
  onBatch: (tenants: IssuedTenant[], created: number) => Promise<void>,
): Promise<number> {
  const perCall = input.perCall ?? TENANTS_PER_CALL;
  let created = 0;
  let handedOn = 0;
  let launched = 0;
  const inFlight: Array<Promise<IssuedTenant[]>> = [];
  const launch = () => {
    const count = Math.min(perCall, input.count - launched);
    const body: Parameters<SandboxApi['createTenants']>[0] = { platform: input.platform, count, seed: (input.seed + launched) >>> 0 };
    if (input.invoices !== undefined) body.invoices = input.invoices;
    launched += count;
    const call = sandbox.createTenants(body);
    // Counted as each call ends, so a failure elsewhere still reports what exists.
    call.then((tenants) => void (created += tenants.length), () => undefined);
    inFlight.push(call);
  };
  try {
    while (handedOn < input.count) {
      while (inFlight.length < IN_FLIGHT && launched < input.count && !input.signal?.aborted) launch();
      const next = inFlight.shift();
      if (!next) break; // interrupted (or the sandbox made fewer than asked): nothing more to wait for
      const tenants = await next;
      handedOn += tenants.length;
      await onBatch(tenants, handedOn);
    }
  } catch (err) {
    // Calls still under way create their tenants anyway: wait for them, to count them.
    await Promise.allSettled(inFlight);
    throw new TenantsStoppedError(created, input.count, false, err);
  }
  if (handedOn < input.count) {
    if (input.signal?.aborted) throw new TenantsStoppedError(created, input.count, true);
    throw new TenantsStoppedError(created, input.count, false, new Error(`The sandbox created ${handedOn} of the ${input.count} tenants asked for.`));
  }
  return created;
}
