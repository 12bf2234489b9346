// A request's log line, put together directly and written to the logger's stream, as
// `logger.info({ event: 'request', ...fields }, message)` writes it (test/service/request-line.test.ts):
// pino's own head (level, time, pid, hostname, name) and end, the fields between them in
// their order. pino would walk the fields one by one (serializers, string checks), which was
// most of the line's cost; these fields are known, and every string among them, the path
// the client sent above all, goes through JSON.stringify.
import { pino } from 'pino';
import type { Logger } from './logger.js';

export interface RequestLineFields {
  method: string;
  /** The route's template, or `unmatched`. */
  route: string;
  /** The path as sent, without its query. */
  path: string;
  status: number;
  /** Written to a tenth of a millisecond. */
  durationMs: number;
  bytes: number;
  /** The caller's client id; never the key. */
  clientId: string | undefined;
  /** The account acted for, when not the caller's own. */
  actingFor: string | undefined;
  correlationId: string;
  /** The client went away before the answer was sent in full. */
  aborted: boolean;
}

const INFO = 30;

/** A string as JSON.stringify writes it, without its cost when nothing in it needs escaping (the usual path and id). */
function quoted(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * A number of milliseconds rounded to a tenth, as String(Math.round(ms * 10) / 10) writes
 * it but without a fraction's conversion: `12`, `0.4`, `12.3`.
 */
export function tenths(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const all = Math.round(ms * 10);
  const tenth = Math.abs(all % 10);
  const whole = (all - (all % 10)) / 10;
  if (tenth === 0) return String(whole);
  return `${whole === 0 && all < 0 ? '-' : ''}${whole}.${tenth}`;
}

/** A number's text as pino writes the number: null when it is not finite. */
function finite(n: number, text: string | number): string | number {
  return Number.isFinite(n) ? text : 'null';
}

/** Writes one request's line at level info (nothing below that level). */
export function requestLineWriter(logger: Logger): (fields: RequestLineFields) => void {
  // pino's parts of every line: fixed for the logger, but the time.
  const part = <T>(symbol: symbol): T => (logger as unknown as Record<symbol, T>)[symbol] as T;
  const { lsCacheSym, timeSym, chindingsSym, endSym, streamSym } = pino.symbols;
  /** `{"level":"info"`. */
  const level = part<Record<number, string>>(lsCacheSym)[INFO]!;
  /** `,"time":…`. */
  const time = part<() => string>(timeSym);
  /** `,"pid":…,"hostname":…,"name":…`. */
  const bindings = part<string>(chindingsSym);
  /** `}` and the line's end. */
  const end = part<string>(endSym);
  const stream = part<{ write(line: string): unknown }>(streamSym);
  // A client's requests come one after another: its id is quoted once for them.
  let client = '';
  let clientQuoted = '""';
  return (f) => {
    if (!logger.isLevelEnabled('info')) return;
    if (f.clientId !== undefined && f.clientId !== client) {
      client = f.clientId;
      clientQuoted = quoted(client);
    }
    const ms = tenths(f.durationMs);
    const message = quoted(`${f.method} ${f.path} ${f.status} in ${ms} ms${f.aborted ? ' (client went away)' : ''}`);
    const line = `${level}${time()}${bindings},"event":"request","method":${quoted(f.method)},"route":${quoted(f.route)}`
      + `,"path":${quoted(f.path)},"status":${f.status},"durationMs":${finite(f.durationMs, ms)},"bytes":${finite(f.bytes, f.bytes)}`
      + `${f.clientId === undefined ? '' : `,"clientId":${clientQuoted}`}${f.actingFor === undefined ? '' : `,"actingFor":${quoted(f.actingFor)}`}`
      + `,"correlationId":${quoted(f.correlationId)}${f.aborted ? ',"aborted":true' : ''},"msg":${message}${end}`;
    stream.write(line);
  };
}
