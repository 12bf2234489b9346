// What the work's signals make of each thing that happens (observability/signals.ts): the
// metric it moves, and the log line for those an operator acts on (a pull failed, a pull
// taken over by another worker, a delivery failed for good, a consumer disabled); and the
// database lost and back as the commands log them. Pulls that end well, retries and
// deliveries made are counted, not logged at info.
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { operatorLines } from '../../src/cli/serve/observe.js';
import type { IO } from '../../src/cli/io.js';
import { createLogger } from '../../src/service/observability/logger.js';
import { signalsOf, type LogEntry } from '../../src/service/observability/signals.js';
import { workMetrics } from '../../src/service/observability/work-metrics.js';
import { Outage } from '../../src/service/outage.js';
import { DatabaseUnreachable } from '../../src/service/store/unreachable.js';
import { jsonLines, parseExposition, total } from '../helpers/observability.js';

function watched() {
  const registry = new Registry();
  const lines: LogEntry[] = [];
  const signals = signalsOf(workMetrics(registry), (entry) => lines.push(entry));
  return { signals, lines, samples: async () => parseExposition(await registry.metrics()) };
}

const run = { pullId: 'p1', companyId: 'c1', dataType: 'invoices', sinceRequested: 42 };

describe('the work\'s signals', () => {
  it('count pulls by how they ended, time the finished ones, and log the failed and the taken over', async () => {
    const { signals, lines, samples } = watched();
    signals.pullRan({ ...run, outcome: 'Complete' });
    signals.pullRan({ ...run, dataType: 'custom/orders-by-region', outcome: 'Complete' });
    signals.pullRan({ ...run, outcome: 'Fetching' });
    signals.pullRan({ ...run, outcome: 'Cancelled' });
    signals.pullRan({ ...run, pullId: 'p2', outcome: 'FetchError' });
    signals.pullRan({ ...run, pullId: 'p3', outcome: 'LeaseLost' });
    signals.recordsWritten('invoices', 1000);
    signals.recordsWritten('invoices', 7);
    const s = await samples();
    expect(total(s, 'ferry_pulls_completed_total', { data_type: 'invoices' })).toBe(1);
    // A custom data type is counted as one label value: its names are the accounts' own.
    expect(total(s, 'ferry_pulls_completed_total', { data_type: 'custom' })).toBe(1);
    expect(total(s, 'ferry_pulls_failed_total', { data_type: 'invoices', status: 'FetchError' })).toBe(1);
    expect(total(s, 'ferry_pulls_failed_total')).toBe(1);
    expect(total(s, 'ferry_pull_duration_seconds_count')).toBe(3);
    expect(total(s, 'ferry_pull_duration_seconds_sum')).toBe(126);
    expect(total(s, 'ferry_pull_leases_lost_total')).toBe(1);
    expect(total(s, 'ferry_records_ingested_total', { data_type: 'invoices' })).toBe(1007);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'warn', event: 'pull.failed', fields: { pullId: 'p2', companyId: 'c1', dataType: 'invoices', status: 'FetchError' } }),
      expect.objectContaining({ level: 'warn', event: 'pull.lease_lost', fields: { pullId: 'p3', companyId: 'c1', dataType: 'invoices' } }),
    ]);
    expect(lines[1]!.message).toBe('pull p3 was taken over by another worker: this one held it past its lease (overloaded, or the database slow to answer)');
  });

  it('count deliveries by outcome with their latency, and log the failed ones and the consumer disabled', async () => {
    const { signals, lines, samples } = watched();
    const attempt = { consumerId: 'k1', deliveryId: 'd1', eventId: 'e1', statusCode: 200, error: null, latencyMs: 30 };
    signals.deliveryRecorded({ ...attempt, outcome: 'delivered' });
    signals.deliveryRecorded({ ...attempt, outcome: 'retried', statusCode: null, error: 'could not connect' });
    signals.deliveryRecorded({ ...attempt, outcome: 'failed', statusCode: 410, disabled: 'The receiver answered 410 Gone.' });
    signals.pushRecorded('Success');
    signals.pushRecorded('Pending');
    const s = await samples();
    expect(['delivered', 'retried', 'failed'].map((outcome) => total(s, 'ferry_webhook_deliveries_total', { outcome }))).toEqual([1, 1, 1]);
    expect(total(s, 'ferry_webhook_attempt_duration_seconds_count')).toBe(3);
    expect(total(s, 'ferry_webhook_consumers_disabled_total')).toBe(1);
    expect(total(s, 'ferry_push_operations_total', { status: 'Pending' })).toBe(1);
    expect(lines.map((l) => [l.level, l.event])).toEqual([
      ['debug', 'webhook.attempt_failed'], ['warn', 'webhook.delivery_failed'], ['warn', 'webhook.consumer_disabled'],
    ]);
    expect(lines[2]).toMatchObject({ fields: { consumerId: 'k1', reason: 'The receiver answered 410 Gone.' }, message: 'webhook consumer k1 was disabled: The receiver answered 410 Gone.' });
  });
});

describe('the database lost and back, in the log', () => {
  it('is one line each, named database.lost and database.back', () => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const io = { err: () => undefined } as unknown as IO;
    const say = operatorLines(io, createLogger({ format: 'json', level: 'info', stream, name: 'ferry-serve' }));
    const outage = new Outage(say.notice);
    for (let i = 0; i < 3; i++) outage.lost(new DatabaseUnreachable('connect ECONNREFUSED 127.0.0.1:5432'));
    outage.back();
    outage.back();
    return new Promise<void>((resolve) => setImmediate(() => {
      expect(jsonLines(text).map((l) => [l.level, l.event, l.name])).toEqual([['warn', 'database.lost', 'ferry-serve'], ['info', 'database.back', 'ferry-serve']]);
      expect(jsonLines(text)[0]!.msg).toContain('the database cannot be reached (connect ECONNREFUSED 127.0.0.1:5432)');
      resolve();
    }));
  });
});
