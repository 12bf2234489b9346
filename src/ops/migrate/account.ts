// What the plan check of a migration needs to know of the account: its plan and how many
// companies it already has.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';

export async function accountOf(client: ApiClient, signal?: AbortSignal): Promise<{ plan: string; companies: number }> {
  const profile = await api.profile(client, signal);
  const companies = await api.companiesPage(client, { pageSize: 1 }, signal);
  return { plan: profile.plan, companies: companies.totalResults };
}
