// What a query of companies may read on SQLite: their columns, and their tags by JSON path
// (the only text from a request spliced into SQL, so it is checked here).
import type { FieldResolver } from '../../query/types.js';
import { FILTERABLE_TAG_KEY } from '../../../platforms/limits.js';

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `$.key` for plain keys (so the expression matches the ferryKey index), `$."key"` for keys
 * with `.` or `-`. Refuses every other key: callers answer 400 before reaching here.
 */
export function jsonPath(key: string): string {
  if (!FILTERABLE_TAG_KEY.test(key)) throw new Error('Unsafe tag key reached jsonPath.');
  return SIMPLE_KEY.test(key) ? `$.${key}` : `$."${key}"`;
}

export const companyFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'description': return { sql: 'description', type: 'string' };
    case 'created': return { sql: 'created', type: 'date' };
    case 'lastSync': return { sql: 'last_sync', type: 'date' };
    case 'createdByUserName': return { sql: 'created_by_user_name', type: 'string' };
  }
  if (path.startsWith('tags.') && FILTERABLE_TAG_KEY.test(path.slice(5))) {
    return { sql: `json_extract(tags, '${jsonPath(path.slice(5))}')`, type: 'string' };
  }
  return undefined;
};
