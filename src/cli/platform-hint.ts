// What to say of an integration key the service does not know: the keys and names close
// to it, and where every key is listed.
import * as api from '../client/api.js';
import type { ApiClient } from '../client/client.js';
import type { IntegrationRecord } from '../client/wire.js';
import { closeMatches, describeCandidates } from './suggest.js';

export async function unknownPlatformHint(client: ApiClient, key: string, signal?: AbortSignal): Promise<string> {
  const all: IntegrationRecord[] = [];
  for await (const row of api.integrationRecords(client, undefined, signal)) all.push(row);
  const near = closeMatches(key, all);
  return `${near.length ? `Did you mean ${describeCandidates(near)}? ` : ''}Every key: ferry integrations list`;
}
