// Parser for the list endpoints' `query` language (API.md, "Query language"):
// `path op value` clauses joined by `&&` / `||`, grouped with `{ }`, `&&` binding tighter.
// Every syntax error is the same 400, so the parser never explains which rule failed.
import { errors } from '../errors.js';

export type Operator = '=' | '!=' | '~' | '>' | '<' | '>=' | '<=';

export interface Clause {
  kind: 'clause';
  path: string;
  op: Operator;
  value: string;
  /** A quoted value is always literal text: `"null"` is the string, not SQL NULL. */
  quoted: boolean;
}

export interface Junction {
  kind: 'and' | 'or';
  items: QueryNode[];
}

export type QueryNode = Clause | Junction;

export const MAX_QUERY_LENGTH = 2048;
/** What one request may ask of the database (docs/api.md, "Limits"): past these, the cost of a read is unbounded. */
export const MAX_CLAUSES = 20;
export const MAX_CONTAINS_CLAUSES = 3;
export const MAX_ORDER_BY_FIELDS = 3;

// Two-character operators first, so `a>=1` is `>=` and not `>` with the value `=1`.
const OPERATORS: readonly Operator[] = ['!=', '>=', '<=', '=', '~', '>', '<'];
const PATH = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
const PATH_CHAR = /[A-Za-z0-9_.]/;
const SPACE = /\s/;

export function isPath(text: string): boolean {
  return PATH.test(text);
}

/** Returns undefined for a blank query, which filters nothing. */
export function parseQuery(query: string): QueryNode | undefined {
  if (query.length > MAX_QUERY_LENGTH) throw errors.malformedQuery();
  if (query.trim() === '') return undefined;
  const parser = new Parser(query);
  const node = parser.or();
  parser.skipSpace();
  // Anything left over is a stray `}` or text after a group, e.g. `{a=1} b=2`.
  if (parser.pos < query.length) throw errors.malformedQuery();
  if (parser.clauses > MAX_CLAUSES) throw errors.queryTooCostly('clauses in query', MAX_CLAUSES);
  if (parser.contains > MAX_CONTAINS_CLAUSES) throw errors.queryTooCostly('~ (contains) clauses in query', MAX_CONTAINS_CLAUSES);
  return node;
}

class Parser {
  pos = 0;
  clauses = 0;
  contains = 0;

  constructor(private readonly text: string) {}

  or(): QueryNode {
    return this.junction('or', '||', () => this.and());
  }

  skipSpace(): void {
    while (SPACE.test(this.text[this.pos] ?? '')) this.pos++;
  }

  private and(): QueryNode {
    return this.junction('and', '&&', () => this.term());
  }

  private junction(kind: Junction['kind'], token: string, next: () => QueryNode): QueryNode {
    const first = next();
    const items = [first];
    while (this.eat(token)) items.push(next());
    return items.length === 1 ? first : { kind, items };
  }

  private term(): QueryNode {
    if (!this.eat('{')) return this.clause();
    const node = this.or();
    if (!this.eat('}')) throw errors.malformedQuery();
    return node;
  }

  private clause(): Clause {
    this.skipSpace();
    const start = this.pos;
    while (PATH_CHAR.test(this.text[this.pos] ?? '')) this.pos++;
    const path = this.text.slice(start, this.pos);
    if (!isPath(path)) throw errors.malformedQuery();
    this.skipSpace();
    const op = OPERATORS.find((candidate) => this.text.startsWith(candidate, this.pos));
    if (!op) throw errors.malformedQuery();
    this.pos += op.length;
    this.clauses += 1;
    if (op === '~') this.contains += 1;
    this.skipSpace();
    if (this.text[this.pos] === '"') return { kind: 'clause', path, op, value: this.quoted(), quoted: true };
    return { kind: 'clause', path, op, value: this.bare(), quoted: false };
  }

  private bare(): string {
    const start = this.pos;
    while (this.pos < this.text.length && !this.atBoundary()) this.pos++;
    const value = this.text.slice(start, this.pos).trim();
    if (value === '') throw errors.malformedQuery();
    return value;
  }

  private quoted(): string {
    let value = '';
    for (this.pos++; ; this.pos++) {
      const char = this.text[this.pos];
      if (char === undefined) throw errors.malformedQuery();
      if (char === '"') break;
      if (char === '\\') {
        const escaped = this.text[++this.pos];
        if (escaped !== '"' && escaped !== '\\') throw errors.malformedQuery();
        value += escaped;
      } else {
        value += char;
      }
    }
    this.pos++;
    // A quoted value must be the whole value: `name="a"b` is malformed.
    this.skipSpace();
    if (this.pos < this.text.length && !this.atBoundary()) throw errors.malformedQuery();
    return value;
  }

  private atBoundary(): boolean {
    return this.text.startsWith('&&', this.pos) || this.text.startsWith('||', this.pos) || this.text[this.pos] === '}';
  }

  private eat(token: string): boolean {
    this.skipSpace();
    if (!this.text.startsWith(token, this.pos)) return false;
    this.pos += token.length;
    return true;
  }
}
