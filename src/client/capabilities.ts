// What a target offers, learned once per client from a public route: ferry's own service
// (its /integrations records carry ferry's extension fields, and its admin routes and
// sandbox platforms may be asked) or the public API alone, where only the public routes
// exist and the platforms cannot be asked anything.
import type { ApiClient } from './client.js';

export type TargetKind = 'ferry' | 'public';

export interface Capabilities {
  kind: TargetKind;
  /** ferry's admin routes (`/admin/…`, the sandbox platforms) exist; an admin key may use them. */
  ferryRoutes: boolean;
}

const learned = new WeakMap<ApiClient, Promise<Capabilities>>();

export function capabilitiesOf(client: ApiClient, signal?: AbortSignal): Promise<Capabilities> {
  let found = learned.get(client);
  if (!found) {
    found = learn(client, signal);
    found.catch(() => learned.delete(client));
    learned.set(client, found);
  }
  return found;
}

async function learn(client: ApiClient, signal?: AbortSignal): Promise<Capabilities> {
  const page = await client.get<{ results?: Array<Record<string, unknown>> } | undefined>('/integrations', { query: { pageSize: 1 }, ...(signal ? { signal } : {}) });
  const ferry = Array.isArray(page?.results?.[0]?.tokenFields) && typeof page?.results?.[0]?.migrationRoute === 'string';
  return { kind: ferry ? 'ferry' : 'public', ferryRoutes: ferry };
}
