// The database's version as this connection sees it: `data_version` moves when another
// connection (the sync worker's) commits, `total_changes()` when this one writes. Equal
// versions mean nothing has changed, so anything derived from the data may be reused.
import type { Db } from './db.js';
import { prepared } from './statements.js';

export function dataVersion(db: Db): string {
  return prepared(db, "SELECT (SELECT data_version FROM pragma_data_version) || ':' || total_changes() AS v").pluck().get() as string;
}
