// Push operations: writes sent to a platform, with their outcome.
import type { Db } from './db.js';
import { planPage, type PagePlan, type PageRequest } from '../paging.js';
import { prepared } from './statements.js';
import { type PushRow, pushFields } from '../pushes.js';

export function insertPush(db: Db, row: Omit<PushRow, 'seq'>): PushRow {
  prepared(db, `INSERT INTO push_operations (key, company_id, connection_id, data_type, status, status_code, requested, completed,
                timeout_minutes, error_message, validation, changes, platform_push_id, change_type, record_id)
                VALUES (@key, @company_id, @connection_id, @data_type, @status, @status_code, @requested, @completed,
                @timeout_minutes, @error_message, @validation, @changes, @platform_push_id, @change_type, @record_id)`).run(row);
  return getPush(db, row.key)!;
}

export function getPush(db: Db, key: string): PushRow | undefined {
  return prepared(db, 'SELECT * FROM push_operations WHERE key = ?').get(key) as PushRow | undefined;
}

export function pushesPage(companyId: string, request: PageRequest): PagePlan {
  return planPage({
    columns: '*', from: 'push_operations', scope: 'company_id = ?', scopeParams: [companyId], resolve: pushFields, defaultOrder: 'seq DESC',
  }, request);
}

export function pendingPushes(db: Db, limit: number): PushRow[] {
  return prepared(db, "SELECT * FROM push_operations WHERE status = 'Pending' ORDER BY seq LIMIT ?").all(limit) as PushRow[];
}

/** Only a pending push settles: the first outcome stands, and its settler alone is told true. */
export function completePush(db: Db, key: string, fields: Pick<PushRow, 'status' | 'status_code' | 'completed'> & Partial<Pick<PushRow, 'error_message' | 'validation' | 'changes'>>): boolean {
  return prepared(db, `UPDATE push_operations SET status = @status, status_code = @status_code, completed = @completed,
                error_message = coalesce(@error_message, error_message), validation = coalesce(@validation, validation),
                changes = coalesce(@changes, changes) WHERE key = @key AND status = 'Pending'`)
    .run({ error_message: null, validation: null, changes: null, ...fields, key }).changes === 1;
}
