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

/** A company about to be written: every column but the store's seq, known before the write. */
export type NewCompanyRow = Omit<CompanyRow, 'seq'>;

/** The columns newCompanyRow fills, in the order the stores' inserts name them. */
export const NEW_COMPANY_COLUMNS = ['id', 'client_id', 'name', 'description', 'created', 'created_by_user_name', 'last_sync', 'tags', 'products', 'ref_subsidiaries'] as const;
