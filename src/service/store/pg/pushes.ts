// Push operations on PostgreSQL: writes sent to a platform, with their outcome, as
// ../sqlite/pushes.ts keeps them in SQLite.
import type { AsyncStore } from '../async-store.js';
import type { PushStore } from '../store.js';
import { planPage } from '../paging.js';
import { pushFields, type PushRow } from '../pushes.js';
import { pgDates } from './pulls.js';
import { row, rows, run, type Queryable } from './query.js';

type PushMethods = Pick<AsyncStore, keyof PushStore | 'pushesPage'>;

const pgPushFields = pgDates(pushFields);

export function pushMethods(db: Queryable): PushMethods {
  return {
    insertPush: async (push) => (await row<PushRow>(db, `INSERT INTO push_operations (key, company_id, connection_id, data_type, status, status_code,
      requested, completed, timeout_minutes, error_message, validation, changes, platform_push_id, change_type, record_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`, [push.key, push.company_id, push.connection_id, push.data_type, push.status,
      push.status_code, push.requested, push.completed, push.timeout_minutes, push.error_message, push.validation, push.changes,
      push.platform_push_id, push.change_type, push.record_id]))!,
    getPush: (key) => row<PushRow>(db, 'SELECT * FROM push_operations WHERE key = ?', [key]),
    pushesPage: (companyId, request) => planPage({
      columns: '*', from: 'push_operations', scope: 'company_id = ?', scopeParams: [companyId], resolve: pgPushFields, defaultOrder: 'seq DESC', dialect: 'postgres',
    }, request),
    pendingPushes: (limit) => rows<PushRow>(db, "SELECT * FROM push_operations WHERE status = 'Pending' ORDER BY seq LIMIT ?", [limit]),
    // Only a pending push completes: a second settler waits for the first's row lock, then finds it settled.
    completePush: async (key, fields) => (await run(db, `UPDATE push_operations SET status = ?, status_code = ?, completed = ?, error_message = coalesce(?, error_message),
      validation = coalesce(?, validation), changes = coalesce(?, changes) WHERE key = ? AND status = 'Pending'`,
    [fields.status, fields.status_code, fields.completed, fields.error_message ?? null, fields.validation ?? null, fields.changes ?? null, key])) === 1,
  };
}
