export { compileOrderBy, compileQuery } from './compile.js';
export { MAX_QUERY_LENGTH, parseQuery } from './parse.js';
export type { Clause, Junction, Operator, QueryNode } from './parse.js';
export type { CompiledWhere, FieldResolver, FieldType, ResolvedField } from './types.js';
