// The process's log: pino, the logger fastify is built on, writing one JSON object a line
// (for a log shipper) or, on a terminal, one readable line (pretty.ts). Requests
// (requests.ts) and the background events an operator acts on (signals.ts) are logged
// here; what is logged is chosen field by field, so no header, token, key or secret can
// reach it (and Authorization would be redacted if anything ever logged a request whole).
import { pino, type Logger } from 'pino';
import type { Writable } from 'node:stream';
import { stderrLines, type LineBatch } from './line-batch.js';
import { isoTimeBySecond } from './log-time.js';
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
    timestamp: isoTimeBySecond,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  }, destination(options));
}

/**
 * The process's own stderr is written without blocking, lines gathered up to 64 KiB
 * (LOG_BATCH_BYTES) or for at most 200 ms, and flushed at exit (line-batch.ts): a write per
 * request line, blocking or not, cost a third of a cached page's throughput in its system
 * calls alone, and a write per 4 KiB still a tenth.
 */
function destination(options: LoggerOptions): Writable | LineBatch {
  if (options.format === 'pretty') return prettyStream(options.stream);
  if (options.stream !== process.stderr) return options.stream;
  return stderrLines();
}

/** Background events as log lines: each with its event name, its ids, and its words. */
export function eventLog(logger: Logger): EventLog {
  return ({ level, event, message, fields }) => logger[level]({ event, ...fields }, message);
}
