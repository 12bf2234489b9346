// What a list endpoint tells the query compiler about the fields a client may filter
// and order by: the SQL expression behind each path and how values compare.

export type FieldType = 'string' | 'number' | 'date' | 'boolean';

export interface ResolvedField {
  /**
   * A trusted SQL expression in the dialect compiled for, e.g. `c.name` or
   * `json_extract(c.tags, '$."region"')` (json-fields.ts writes these). In PostgreSQL it
   * has the type's SQL type: text, a number, boolean, or timestamptz for a date.
   */
  sql: string;
  type: FieldType;
}

/** Returns undefined for a path the resource does not have (→ 400 unknown property). */
export type FieldResolver = (path: string) => ResolvedField | undefined;

export interface CompiledWhere {
  /** SQL boolean expression, with `?` placeholders; `1` (PostgreSQL: `TRUE`) when the query is empty. */
  sql: string;
  params: Array<string | number>;
}
