// Shared by the public-API tests: a `ferry serve` in this process behind the proxy that
// offers only the public API, and the flags that point ferry at the proxy with a client's
// key (read from a file, as a client keeps it).
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { createClient } from '../helpers/sync.js';
import { stopCleanly } from '../migrate/support.js';

export interface PublicApiTarget {
  stack: ServeHandle;
  proxy: PublicApiProxy;
  /** `--base-url PROXY --api-key-file FILE`. */
  target: string[];
}

export async function startPublicApiTarget(): Promise<PublicApiTarget> {
  const stack = await startTestStack('serve');
  const proxy = await startPublicApiProxy(stack.baseUrl, { latencyMs: 3 });
  const key = await createClient(stack.api, stack.adminKey, 'Public Api Ltd', 'Paid');
  return { stack, proxy, target: ['--base-url', proxy.url, '--api-key-file', stack.keyFile('client.key', key)] };
}

export async function stopPublicApiTarget(proxy: PublicApiProxy | undefined, stack: ServeHandle | undefined): Promise<void> {
  await proxy?.close();
  await stopCleanly(stack);
}
