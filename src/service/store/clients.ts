// Accounts ("clients") and their API keys as both stores keep them (SQL in
// sqlite/clients.ts and pg/clients.ts).

export type Plan = 'Free' | 'Paid';

export interface ClientRow {
  seq: number;
  id: string;
  name: string;
  plan: Plan;
  created: string;
  is_admin: number;
  /** PUT /profile's fields, as JSON; null until set. */
  profile: string | null;
}

export interface ApiKeyRow {
  id: string;
  client_id: string;
  created: string;
  revoked: string | null;
  name?: string | null;
}
