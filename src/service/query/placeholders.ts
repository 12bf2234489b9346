// Statements are written once with `?` placeholders, the way SQLite takes them; this turns
// a whole PostgreSQL statement's `?` into node-postgres's `$1, $2, …`, in order, so scope,
// filter, LIMIT and OFFSET parameters keep the order the caller lists them in. A `?` inside
// a string literal, a quoted identifier, a dollar-quoted string or a comment is text and
// stays as it is. PostgreSQL's jsonb operators `?`, `?|` and `?&` cannot be told from a
// placeholder, so trusted SQL spells them jsonb_exists(), jsonb_exists_any(), jsonb_exists_all().

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    const end = skipQuoted(sql, i);
    if (end > i) {
      out += sql.slice(i, end);
      i = end;
    } else if (char === '?') {
      if (/^\s*'|^[|&]/.test(sql.slice(i + 1, i + 40))) throw new Error('A jsonb ? operator reached numberPlaceholders; use jsonb_exists().');
      out += `$${++n}`;
      i++;
    } else {
      if (char === '$' && /[0-9]/.test(sql[i + 1] ?? '') && !IDENTIFIER_CHAR.test(sql[i - 1] ?? '')) {
        throw new Error('A numbered placeholder reached numberPlaceholders; write `?`.');
      }
      out += char;
      i++;
    }
  }
  return out;
}

/** The index after the literal, identifier or comment starting at `i`; `i` when none starts there. */
function skipQuoted(sql: string, i: number): number {
  const char = sql[i]!;
  const before = sql[i - 1] ?? '';
  if (char === "'") {
    // E'…' takes backslash escapes; a standard string only doubles its quotes.
    const escapes = /[Ee]/.test(before) && !IDENTIFIER_CHAR.test(sql[i - 2] ?? '');
    return closeQuote(sql, i, "'", escapes);
  }
  if (char === '"') return closeQuote(sql, i, '"', false);
  if (char === '-' && sql[i + 1] === '-') {
    const newline = sql.indexOf('\n', i);
    return newline < 0 ? sql.length : newline;
  }
  if (char === '/' && sql[i + 1] === '*') return closeComment(sql, i);
  if (char === '$' && !IDENTIFIER_CHAR.test(before)) {
    const tag = DOLLAR_TAG.exec(sql.slice(i))?.[0];
    if (tag) {
      const close = sql.indexOf(tag, i + tag.length);
      if (close < 0) throw new Error('An unterminated dollar quote reached numberPlaceholders.');
      return close + tag.length;
    }
  }
  return i;
}

function closeQuote(sql: string, i: number, quote: string, escapes: boolean): number {
  for (let j = i + 1; j < sql.length; j++) {
    if (escapes && sql[j] === '\\') j++;
    else if (sql[j] === quote) {
      if (sql[j + 1] !== quote) return j + 1;
      j++;
    }
  }
  throw new Error('An unterminated quote reached numberPlaceholders.');
}

// PostgreSQL's block comments nest.
function closeComment(sql: string, i: number): number {
  let depth = 0;
  for (let j = i; j < sql.length - 1; j++) {
    if (sql[j] === '/' && sql[j + 1] === '*') {
      depth++;
      j++;
    } else if (sql[j] === '*' && sql[j + 1] === '/') {
      j++;
      if (--depth === 0) return j + 1;
    }
  }
  throw new Error('An unterminated comment reached numberPlaceholders.');
}
