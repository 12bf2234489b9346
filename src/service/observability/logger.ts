// The process's log: pino, the logger fastify is built on, writing one JSON object a line
// (for a log shipper) or, on a terminal, one readable line (pretty.ts). Requests
// (requests.ts) and the background events an operator acts on (signals.ts) are logged
// here; what is logged is chosen field by field, so no header, token, key or secret can
// reach it (and Authorization would be redacted if anything ever logged a request whole).
import { pino, type Logger } from 'pino';
import type { Writable } from 'node:stream';
import { prettyStream } from './pretty.js';
import type { EventLog } from './signals.js';

export type { Logger };
export type LogFormat = 'json' | 'pretty' | 'off';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty', 'off'];
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface LoggerOptions {
  format: Exclude<LogFormat, 'off'>;
  level: LogLevel;
  /** Where lines go (the command's stderr). */
  stream: Writable;
  /** Which process writes: `ferry-serve`, `ferry-worker`. */
  name: string;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino({
    name: options.name,
    level: options.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  }, destination(options));
}

/**
 * The process's own stderr is written without blocking (pino's destination, flushed at
 * exit): a blocking write per request line cost a third of a cached page's throughput,
 * and lines written while one write is under way go out together in the next.
 */
function destination(options: LoggerOptions): Writable | ReturnType<typeof pino.destination> {
  if (options.format === 'pretty') return prettyStream(options.stream);
  return options.stream === process.stderr ? pino.destination({ dest: 2, sync: false }) : options.stream;
}

/** Background events as log lines: each with its event name, its ids, and its words. */
export function eventLog(logger: Logger): EventLog {
  return ({ level, event, message, fields }) => logger[level]({ event, ...fields }, message);
}
