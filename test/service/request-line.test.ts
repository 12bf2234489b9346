// A request's log line is put together by hand; it must be the line pino writes for
// `logger.info({ event: 'request', ...fields }, message)`, byte for byte but the time, for
// every kind of path a client can send, in JSON and on a terminal, and none below info.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../../src/service/observability/logger.js';
import { requestLineWriter, tenths, type RequestLineFields } from '../../src/service/observability/request-line.js';

function capture(format: 'json' | 'pretty', level: LogLevel = 'info') {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const logger = createLogger({ format, level, stream, name: 'ferry-serve' });
  return { logger, lines: () => chunks.join('').split('\n').filter((line) => line.length > 0) };
}

/** What requests.ts logged through pino before the line was put together by hand. */
function throughPino(f: RequestLineFields): [Record<string, unknown>, string] {
  const durationMs = Math.round(f.durationMs * 10) / 10;
  return [{
    event: 'request', method: f.method, route: f.route, path: f.path, status: f.status, durationMs, bytes: f.bytes,
    clientId: f.clientId, actingFor: f.actingFor, correlationId: f.correlationId, ...(f.aborted ? { aborted: true } : {}),
  }, `${f.method} ${f.path} ${f.status} in ${durationMs} ms${f.aborted ? ' (client went away)' : ''}`];
}

const BASE: RequestLineFields = {
  method: 'GET', route: '/companies', path: '/companies', status: 200, durationMs: 0.4, bytes: 3313,
  clientId: 'c6ea2b5f-a99c-4695-9e10-de3218388e98', actingFor: undefined, correlationId: '7ae090b5-a4ff-4911-9e2a-87b8c4273de3', aborted: false,
};
const CASES: RequestLineFields[] = [
  BASE,
  { ...BASE, route: 'unmatched', path: '/comp"anies\\x/%22y', status: 404, durationMs: 12.04, clientId: undefined },
  { ...BASE, path: '/companies/\u0001\t\u001f\u007f/é/\u2028', actingFor: '0b0c3a9e-4f58-4d1c-9a55-1f2f0e6b1d11', status: 201, durationMs: 1234.5 },
  { ...BASE, clientId: 'another-client', durationMs: 0.05 },
  { ...BASE, clientId: 'odd"client\\', durationMs: 7.96 },
  { ...BASE, method: 'POST', route: '/companies/:companyId/push/:dataType', path: `/companies/${'a'.repeat(150)}`, status: 500, bytes: 0, aborted: true },
  { ...BASE, durationMs: Number.NaN, bytes: Number.POSITIVE_INFINITY },
];
const withoutTime = (line: string) => line.replace(/,"time":"[^"]+"/, ',"time":"T"').replace(/^\d\d:\d\d:\d\d\.\d{3} /, 'T ');

describe('a request\'s log line', () => {
  it.each(['json', 'pretty'] as const)('is the line pino writes for it (%s)', (format) => {
    const byHand = capture(format);
    const byPino = capture(format);
    const write = requestLineWriter(byHand.logger);
    for (const fields of CASES) {
      write(fields);
      byPino.logger.info(...throughPino(fields));
    }
    expect(byHand.lines()).toHaveLength(CASES.length);
    expect(byHand.lines().map(withoutTime)).toEqual(byPino.lines().map(withoutTime));
    if (format === 'json') {
      expect(JSON.parse(byHand.lines()[1]!)).toMatchObject({ level: 'info', name: 'ferry-serve', path: '/comp"anies\\x/%22y', msg: 'GET /comp"anies\\x/%22y 404 in 12 ms' });
      expect(byHand.lines()[0]).toMatch(/^\{"level":"info","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","pid":\d+,"hostname":"[^"]+","name":"ferry-serve","event":"request",/);
    }
  });

  it('writes a duration to a tenth as a number would be written', () => {
    const durations = [0, -0.04, 0.04, 0.05, 0.15, 0.25, 0.95, 1, 9.99, 12.34, 99.95, 1234.56, 65_535.45, 3_600_000.04];
    for (let i = 0; i < 2000; i++) durations.push(i / 7, i * 1.37, (i * 0.1) + 0.05);
    for (const ms of durations) expect(tenths(ms)).toBe(String(Math.round(ms * 10) / 10));
    expect(tenths(Number.NaN)).toBe('NaN');
  });

  it('escapes what JSON.stringify escapes, a lone surrogate too', () => {
    const { logger, lines } = capture('json');
    requestLineWriter(logger)({ ...BASE, path: '/lone/\ud800/surrogate\n' });
    expect(lines()[0]).toContain(',"path":"/lone/\\ud800/surrogate\\n",');
    expect(JSON.parse(lines()[0]!)).toMatchObject({ path: '/lone/\ud800/surrogate\n', msg: 'GET /lone/\ud800/surrogate\n 200 in 0.4 ms' });
  });

  it('is not written below info', () => {
    const { logger, lines } = capture('json', 'warn');
    requestLineWriter(logger)(BASE);
    logger.warn('kept');
    expect(lines()).toHaveLength(1);
    expect(JSON.parse(lines()[0]!)).toMatchObject({ level: 'warn', msg: 'kept' });
  });
});
