// The page plan of a generation's records, for both stores: the same scope, order and
// remembered starts, with only how a record is read (its bytes, a field of it) per dialect.
// Each store reads the data type's fields its own way (SQLite at once, PostgreSQL over a
// socket) and hands them here.
import type { Dialect } from '../query/dialect.js';
import { jsonField } from '../query/json-fields.js';
import { isPath } from '../query/parse.js';
import type { FieldResolver, FieldType } from '../query/types.js';
import { planPage, type PagePlan, type PageRequest } from './paging.js';

/** A standard data type's key, or a custom data type's (`custom/` and a name the routes checked the same way). */
const DATA_TYPE_KEY = /^(?:[A-Za-z]+|custom\/[A-Za-z0-9_-]{1,64})$/;
/** The longest member name json-fields.ts splices; a longer one is no field of a record. */
const MAX_KEY = 64;

interface RecordReading {
  /** The record's JSON text as its UTF-8 bytes, so a page is spliced from them as they are. */
  bytes: string;
  /** A query path of a known field as SQL over the record; undefined: no such field. */
  field(path: string, type: FieldType): string | undefined;
}

const READING: Record<Dialect, RecordReading> = {
  sqlite: {
    bytes: 'CAST(data AS BLOB)',
    field: (path) => `json_extract(data, '$.${path}')`,
  },
  // The record is kept as the text it was synced as (json, not jsonb).
  postgres: {
    bytes: `convert_to(data::text, 'UTF8')`,
    field: (path, type) => {
      const keys = path.split('.');
      return keys.some((key) => key.length > MAX_KEY) ? undefined : jsonField('postgres', 'data', keys, type);
    },
  },
};

/**
 * The data type is inlined as a literal so the partial indexes on data_type serve; it and
 * the query paths are spliced into SQL text, so both are checked here against the only
 * shapes that are safe, whatever the caller checked. Callers read only published
 * generations, whose records never change: the count and the places pages start are
 * remembered (fixed-scope.ts).
 */
export function planRecordsPage(dialect: Dialect, fields: Map<string, FieldType>, companyId: string, dataType: string, generation: number,
  request: PageRequest, connectionId?: string): PagePlan {
  if (!DATA_TYPE_KEY.test(dataType)) throw new Error('Unsafe data type key reached listRecords.');
  const reading = READING[dialect];
  const resolve: FieldResolver = (path) => {
    const type = isPath(path) ? fields.get(path) : undefined;
    const sql = type && reading.field(path, type);
    return type && sql ? { sql, type } : undefined;
  };
  return planPage({
    columns: `${reading.bytes} AS data, seq`,
    from: 'records',
    scope: `company_id = ? AND data_type = '${dataType}' AND generation = ?${connectionId ? ' AND connection_id = ?' : ''}`,
    scopeParams: connectionId ? [companyId, generation, connectionId] : [companyId, generation],
    resolve,
    defaultOrder: 'seq',
    fixed: { seek: 'seq' },
    dialect,
  }, request);
}
