// The operator's flags of `ferry serve` and `ferry worker`: the metrics port and the log,
// and the lines the command itself says, which go into that log when there is one (so a
// log shipper reads only JSON lines), else to stderr as before.
import { InvalidArgumentError, type Command } from 'commander';
import { wholeNumber } from '../flags.js';
import type { IO } from '../io.js';
import type { Logger } from '../../stack.js';

const FORMATS = ['json', 'pretty', 'off'] as const;
const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export interface ObserveFlags {
  metricsPort?: number;
  metricsHost?: string;
  logFormat?: (typeof FORMATS)[number];
  logLevel?: (typeof LEVELS)[number];
}

function oneOf<T extends string>(flag: string, values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`${flag} must be one of ${values.join(', ')}.`);
    return value as T;
  };
}

/** --metrics-port, --metrics-host, --log-format and --log-level. */
export function observeOptions(command: Command): Command {
  return command
    .option('--metrics-port <port>', 'serve Prometheus metrics at /metrics, and /healthz and /readyz, on this port (0 picks a free one); off unless given', wholeNumber('--metrics-port', 0, 65535))
    .option('--metrics-host <host>', 'address of the metrics port (default 127.0.0.1: give 0.0.0.0 or an interface for a scraper on another machine)')
    .option('--log-format <format>', 'json (a JSON object a line), pretty (a line a person reads) or off; default json when stderr is not a terminal, else pretty', oneOf('--log-format', FORMATS))
    .option('--log-level <level>', 'debug, info (default: a line per request), warn (failures only) or error', oneOf('--log-level', LEVELS));
}

export const OBSERVE_HELP = `With --metrics-port N the process keeps Prometheus metrics and serves them at
http://127.0.0.1:N/metrics (--metrics-host for another interface), with /healthz and
/readyz beside them; the --json listening line names it (metricsUrl). The log (stderr)
has a line per request (method, route, status, duration, bytes, client id, correlation id)
and one per event an operator acts on (a pull failed, a webhook delivery failed, a consumer
disabled, the database lost and back, a pull's lease taken over). docs/operations.md.
`;

/** The format the flags and the terminal make: JSON for a log shipper (stderr not a terminal), lines for a person. */
export function logFormatOf(flags: ObserveFlags, io: IO): 'json' | 'pretty' | 'off' {
  return flags.logFormat ?? (io.stderrIsTTY ? 'pretty' : 'json');
}

/** What the command says while it runs: into the log when there is one, else stderr. */
export interface OperatorLines {
  notice(message: string, event?: string): void;
  /** `where`: the request's correlation id, or the background work's place in parentheses. */
  internalError(err: unknown, where: string, fields?: Record<string, string>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}

export function operatorLines(io: IO, logger: Logger | undefined): OperatorLines {
  if (!logger) {
    return {
      notice: (message) => io.err(message, { force: true }),
      internalError: (err, where) => io.err(`internal error ${where}: ${(err as Error)?.message ?? err}`, { force: true }),
      info: (message) => io.err(message),
    };
  }
  return {
    notice: (message, event) => (event === 'database.back' ? logger.info({ event }, message) : logger.warn({ event: event ?? 'notice' }, message)),
    internalError: (err, where, fields) => logger.error({ event: 'internal_error', ...fields }, `internal error ${where}: ${(err as Error)?.message ?? err}`),
    info: (message, fields) => logger.info(fields ?? {}, message),
  };
}
