// What a connection remembers of a list whose rows never change once they can be read (the
// records of a published generation): its count, and where pages began. Both would
// otherwise cost on every page: a count over the whole scope, and an OFFSET that steps
// over every row before the page (tens of thousands deep into a large data set). With a
// known start, a page is a seek on the order column (`seq > ?`) plus a short offset from
// the nearest start known before it; pages asked for in order (an export) find theirs
// exactly. Bounded: the oldest scopes go first, and each scope keeps a limited number of starts.
// Kept per owner: a SQLite connection, or the PostgreSQL store's process (its published
// generations never change either, whichever process reads them).

export interface FixedScope {
  total: number | undefined;
  /** Page offset → the order column's value of the row just before it (rows from there on are greater). */
  starts: Map<number, number>;
}

const MAX_SCOPES = 256;
const MAX_STARTS = 512;
const scopes = new WeakMap<object, Map<string, FixedScope>>();

/** The remembered state of one scope (one count statement with its parameters) for `owner`. */
export function fixedScope(owner: object, key: string): FixedScope {
  let byKey = scopes.get(owner);
  if (!byKey) scopes.set(owner, (byKey = new Map()));
  let scope = byKey.get(key);
  if (scope) {
    // Most recently used last, so the first one is the one to drop.
    byKey.delete(key);
  } else {
    scope = { total: undefined, starts: new Map([[0, Number.MIN_SAFE_INTEGER]]) };
    if (byKey.size >= MAX_SCOPES) byKey.delete(byKey.keys().next().value!);
  }
  byKey.set(key, scope);
  return scope;
}

/** The known start nearest before `offset`: its offset and the order value rows come after. */
export function nearestStart(scope: FixedScope, offset: number): { at: number; after: number } {
  let at = 0;
  for (const known of scope.starts.keys()) if (known <= offset && known > at) at = known;
  return { at, after: scope.starts.get(at)! };
}

/** Remembers where the page after one that ended at `offset` (exclusive) begins. */
export function rememberStart(scope: FixedScope, offset: number, lastValue: number): void {
  if (scope.starts.has(offset)) return;
  if (scope.starts.size >= MAX_STARTS) return;
  scope.starts.set(offset, lastValue);
}
