// Why a PostgreSQL store could not be opened, in one line a person can act on: where
// (host:port and database) and the cause, never the URL's password. No pg import here, so
// the command line can recognise the error without loading the driver.
import { isDriverError } from './driver-errors.js';

/** The `code` of a DatabaseUnavailableError, for callers that test codes (as for EADDRINUSE). */
export const DATABASE_UNAVAILABLE = 'FERRY_DATABASE_UNAVAILABLE';

export class DatabaseUnavailableError extends Error {
  readonly code = DATABASE_UNAVAILABLE;

  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Where a postgres:// URL points, as `host:port/database`; what the error names. */
export interface Target {
  host: string;
  port: string;
  database: string;
  user: string;
  /** The password as written in the URL and decoded, to scrub from any message. */
  secrets: string[];
}

export function describeTarget(target: Target): string {
  return `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}/${target.database}`;
}

/**
 * Reads the parts of the URL the message names. pg fills what is missing from PG*
 * variables and its own defaults (localhost, 5432, the user's name); so does this.
 */
export function parseTarget(url: string, env: NodeJS.ProcessEnv = process.env): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL itself may hold a password: it is not repeated.
    throw new DatabaseUnavailableError('the database URL is not a valid postgres:// URL.',
      'Give a URL such as postgres://user@host:5432/database.');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUnavailableError(`the database URL must start with postgres://, not ${parsed.protocol}//.`,
      'Give a URL such as postgres://user@host:5432/database.');
  }
  const decode = (value: string): string => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  const user = decode(parsed.username) || env.PGUSER || env.USER || 'postgres';
  const host = parsed.searchParams.get('host') ?? (decode(parsed.hostname).replace(/^\[(.*)\]$/, '$1') || env.PGHOST || 'localhost');
  const port = parsed.searchParams.get('port') ?? (parsed.port || env.PGPORT || '5432');
  const database = decode(parsed.pathname.slice(1)) || env.PGDATABASE || user;
  const secrets = parsed.password ? [parsed.password, decode(parsed.password)] : [];
  return { host, port, database, user, secrets };
}

/** Node's socket and DNS errors, and pg's own, by what they mean for the person starting ferry. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset by the server',
  ENOENT: 'no server socket at that path',
};

/** PostgreSQL's SQLSTATEs for a refused start-up. */
function serverCause(code: string, message: string, target: Target): string | undefined {
  switch (code) {
    case '28P01': return `authentication failed for user "${target.user}"`;
    case '28000': return message; // role does not exist, no pg_hba.conf entry, …
    case '3D000': return `database "${target.database}" does not exist`;
    case '53300': return 'too many connections';
    case '57P03': return 'the database system is starting up or shutting down';
    default: return undefined;
  }
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // Node tries each address of a name in turn and reports an AggregateError of them all.
  const inner = (err as { errors?: unknown } | null)?.errors;
  return Array.isArray(inner) ? inner.map(codeOf).find((c) => c !== undefined) : undefined;
}

function causeOf(err: unknown, target: Target, timeoutMs: number): string {
  const message = String((err as Error | null)?.message ?? err);
  const code = codeOf(err);
  if (code && NETWORK_CAUSES[code]) return NETWORK_CAUSES[code];
  if (code) {
    const cause = serverCause(code, message, target);
    if (cause) return cause;
  }
  if (/timeout/i.test(message)) return `no answer within ${timeoutMs / 1000} s (timed out)`;
  if (/client password must be a string|password must be a string/i.test(message)) return 'the server asks for a password and the URL has none';
  const nested = (err as { cause?: unknown } | null)?.cause;
  if (nested) return causeOf(nested, target, timeoutMs);
  return message.split('\n')[0] || 'unknown error';
}

function scrub(text: string, secrets: string[]): string {
  return secrets.filter((s) => s !== '').reduce((out, secret) => out.split(secret).join('***'), text);
}

/** The error to throw when connecting failed: one line, the target and the cause. */
export function unavailable(err: unknown, target: Target, timeoutMs: number): DatabaseUnavailableError {
  const message = `cannot connect to PostgreSQL at ${describeTarget(target)}: ${causeOf(err, target, timeoutMs)}`;
  return new DatabaseUnavailableError(scrub(message, target.secrets),
    'Check the database URL (--database or FERRY_DATABASE_URL) and that PostgreSQL is running and reachable from here.');
}

/** A server whose version the statements do not run on; versions as server_version_num gives them (150004). */
export function tooOld(version: number, needed: number, target: Target): DatabaseUnavailableError {
  return new DatabaseUnavailableError(`PostgreSQL at ${describeTarget(target)} is version ${versionName(version)}; ferry needs ${versionName(needed)} or later`,
    'Upgrade the server, or point --database (or FERRY_DATABASE_URL) at a newer one.');
}

function versionName(num: number): string {
  return `${Math.floor(num / 10_000)}.${num % 10_000}`;
}

/** SQLSTATE classes and codes that mean the server went away, not that a statement was wrong. */
const LOST_CLASSES = ['08']; // connection exception
const LOST_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN']);
const LOST_CODES = new Set(['57P01', '57P02', '57P03', '53300', '3D000']); // shut down, crashed, starting up, too many connections, database dropped
const LOST_MESSAGES = /Connection terminated|is not currently accepting connections|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Client was closed/i;

/**
 * Whether `err` says the database cannot be reached right now (a network error, the server
 * shutting down or refusing connections), so the request may succeed later: the service
 * answers 503 with Retry-After, and workers pause, instead of reporting an internal error.
 * Only the driver's errors can say so (driver-errors.ts): the same socket errors from an
 * HTTP client or a platform are no news of the database.
 */
export function isDatabaseLost(err: unknown): boolean {
  return isDriverError(err) && looksLost(err);
}

function looksLost(err: unknown): boolean {
  const code = codeOf(err);
  if (code && (LOST_NETWORK.has(code) || LOST_CODES.has(code) || LOST_CLASSES.includes(code.slice(0, 2)))) return true;
  const message = (err as Error | null)?.message;
  if (typeof message === 'string' && LOST_MESSAGES.test(message)) return true;
  const nested = (err as { cause?: unknown } | null)?.cause;
  return nested !== undefined && nested !== err && looksLost(nested);
}
