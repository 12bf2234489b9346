export { compileOrderBy, compileQuery } from './compile.js';
export type { Dialect } from './dialect.js';
export { jsonField, postgresDate, sqliteDate } from './json-fields.js';
export { MAX_QUERY_LENGTH, parseQuery } from './parse.js';
export { numberPlaceholders } from './placeholders.js';
export type { Clause, Junction, Operator, QueryNode } from './parse.js';
export type { CompiledWhere, FieldResolver, FieldType, ResolvedField } from './types.js';
