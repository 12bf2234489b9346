// What every SDK conformance file runs against: a real `ferry serve` on 127.0.0.1 (no rate
// limit: a file calls as fast as its SDK goes), a Paid client, and a company of the sandbox's
// Xero linked under the client's key. Stopped after the file, its clean exit checked.
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { createClient, linkedCompany, type Linked } from '../helpers/sync.js';

export interface SdkTarget {
  stack: ServeHandle;
  /** The client's API key. */
  key: string;
  linked: Linked;
}

/**
 * Registers the file's beforeAll and afterAll. `ready` runs at the end of beforeAll with the
 * target made: where a file builds its SDK and syncs what its operations read.
 */
export function sdkTarget(names: { client: string; linked: string }, tenant: { invoices: number; seed?: number }, ready: (target: SdkTarget) => Promise<void>): void {
  let stack: ServeHandle | undefined;
  beforeAll(async () => {
    stack = await startTestStack('serve', { args: ['--rate-limit', '0'] });
    const key = await createClient(stack.api, stack.adminKey, names.client, 'Paid');
    const linked = await linkedCompany(stack.api, stack.sandboxUrl, 'gbol', tenant.invoices, { apiKey: key, name: names.linked, ...(tenant.seed === undefined ? {} : { seed: tenant.seed }) });
    await ready({ stack, key, linked });
  }, 120_000);

  afterAll(async () => {
    const stopped = await stack?.stop();
    expect(stopped?.code, stopped?.stderr).toBe(0);
  });
}

/** True once every data type of a data status answer is Complete (and there is one). */
export function allComplete(statuses: object): boolean {
  const states = Object.values(statuses) as Array<{ currentStatus?: string } | undefined>;
  return states.length > 0 && states.every((s) => s?.currentStatus === 'Complete');
}
