// Companies as both stores keep them (SQL in sqlite/companies.ts and pg/companies.ts).

export interface CompanyRow {
  seq: number;
  id: string;
  client_id: string;
  name: string;
  description: string | null;
  created: string;
  created_by_user_name: string | null;
  last_sync: string | null;
  tags: string;
  products: string;
  ref_subsidiaries: string;
}

export interface CompanyInput {
  name: string;
  description?: string;
  tags: Record<string, string>;
}
