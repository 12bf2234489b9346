// Which errors came from the PostgreSQL driver. A reset, refused or timed-out socket looks
// the same whether the database's connection or an HTTP client's broke (a client that
// gives up mid-body is an ECONNRESET too), so only the errors the driver handed back are
// marked, where the pool and its clients give them, and only marked ones can say that the
// database is gone (unavailable.ts isDatabaseLost).
import type { Pool } from 'pg';

const fromDriver = new WeakSet<object>();

export function markDriverError<E>(err: E): E {
  if (typeof err === 'object' && err !== null) fromDriver.add(err);
  return err;
}

/** Whether `err`, or an error it was caused by, came from the driver. */
export function isDriverError(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let at = err; typeof at === 'object' && at !== null && !seen.has(at); at = (at as { cause?: unknown }).cause) {
    if (fromDriver.has(at)) return true;
    seen.add(at);
  }
  return false;
}

type Method = (...args: unknown[]) => unknown;

/** Replaces `target[name]` with the same method that marks what it fails with, by callback or by promise. */
function markFailures(target: object, name: 'connect' | 'query'): void {
  const methods = target as Record<string, Method>;
  const original = methods[name]!.bind(target);
  methods[name] = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (err: unknown, ...rest: unknown[]) => (callback as Method)(err ? markDriverError(err) : err, ...rest);
      return original(...args);
    }
    const result = original(...args);
    return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(markDriverError(err))) : result;
  };
}

/** Marks every error the pool, and each client it connects, hands back. */
export function markPoolErrors(pool: Pool): void {
  markFailures(pool, 'connect');
  markFailures(pool, 'query');
  pool.on('connect', (client) => markFailures(client, 'query'));
}
