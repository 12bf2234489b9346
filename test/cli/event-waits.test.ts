// Waits driven by events: `sync --wait`, `push --wait` and `check` follow the service's
// event stream when the target has one, and poll when it has none (or with --no-events /
// FERRY_NO_EVENTS=1). The CLI against a real `ferry serve`, both in this process: the same
// results both ways; a completion noticed long before the first poll would come; and through a target
// without the stream (the public API proxy), polling as before.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry as ferryInProcess, type InProcessResult } from '../helpers/in-process.js';
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { createClient, linkedCompany, patchSandbox, readAll, sampleInvoice, type Api, type Linked } from '../helpers/sync.js';

const PLATFORM = 'gbol';
/** A poll interval no wait here may sit out: a result before it was noticed through an event. */
const LONG_POLL_MS = 30_000;
/** Well under the first poll's 27 s (30 s less its 10% jitter), well over the seconds a sync or a push takes here. */
const NOTICED_WITHIN_MS = 20_000;

let serve: ServeHandle;
let api: Api;
let target: string[];
let a: Linked;
let b: Linked;
let customerId: string;

beforeAll(async () => {
  serve = await startTestStack('serve');
  const key = await createClient(serve.api, serve.adminKey, 'Event Waits Ltd', 'Paid');
  api = { ...serve.api, call: (method, path, options = {}) => serve.api.call(method, path, { apiKey: key, ...options }) };
  target = serve.target(serve.keyFile('client.key', key));
  a = await linkedCompany(api, serve.sandboxUrl, PLATFORM, 12, { name: 'Events A', seed: 801 });
  b = await linkedCompany(api, serve.sandboxUrl, PLATFORM, 7, { name: 'Events B', seed: 802 });
});

afterAll(async () => {
  await serve?.stop();
});

const ferry = (args: string[], env: Record<string, string> = {}) => ferryInProcess([...target, ...args], { env });

/** Whether the run followed the stream (the verbose log says so when its first event arrives). */
const followedStream = (run: InProcessResult) => run.stderr.includes('[events] following the event stream');
const askedStream = (run: InProcessResult) => /GET \/events\/stream/.test(run.stderr);

async function timed(run: Promise<InProcessResult>): Promise<InProcessResult & { ms: number }> {
  const started = Date.now();
  const result = await run;
  return { ...result, ms: Date.now() - started };
}

function pushFile(name: string, records: Array<Record<string, unknown>>): string {
  const file = join(serve.dir, name);
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}

describe('the same results with the event stream and by polling alone', () => {
  it('sync --wait: identical summaries with events, with --no-events and with FERRY_NO_EVENTS=1', async () => {
    const args = ['-v', '--json', 'sync', a.companyId, b.companyId, '--wait', '--timeout', '90s', '--poll-ms', '50'];
    const events = await ferry(args);
    expect(events.code, events.stderr).toBe(0);
    expect(followedStream(events)).toBe(true);
    const flag = await ferry([...args, '--no-events']);
    expect(flag.code, flag.stderr).toBe(0);
    const env = await ferry(args, { FERRY_NO_EVENTS: '1' });
    expect(env.code, env.stderr).toBe(0);
    for (const polled of [flag, env]) {
      expect(askedStream(polled)).toBe(false);
      expect(polled.stderr).not.toContain('[events]');
    }
    const summary = JSON.parse(events.stdout);
    expect(summary.map((s: any) => [s.companyId, s.state, s.ok])).toEqual([[a.companyId, 'complete', true], [b.companyId, 'complete', true]]);
    expect(Object.keys(summary[0].dataTypes).length).toBeGreaterThan(5);
    expect(JSON.parse(flag.stdout)).toEqual(summary);
    expect(JSON.parse(env.stdout)).toEqual(summary);
    customerId = (await readAll(api, a.companyId, 'customers'))[0].id;
  });

  it('push --wait on an async platform: the same outcome per record both ways', async () => {
    await patchSandbox(serve.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 1 });
    const outcome = async (extra: string[], name: string) => {
      const file = pushFile(`${name}.ndjson`, [
        sampleInvoice(customerId, { invoiceNumber: `${name}-OK` }),
        sampleInvoice('nobody', { invoiceNumber: `${name}-LATER-FAIL` }),
      ]);
      const run = await ferry(['-v', '--json', 'push', 'invoices', '--company', a.companyId, '--connection', a.connectionId, '--file', file, '--wait', '--timeout', '60s', '--poll-ms', '50', ...extra]);
      expect(run.code, run.stderr).toBe(3);
      const doc = JSON.parse(run.stdout);
      return { run, results: doc.results.map(({ pushOperationKey: _key, ...rest }: any) => rest), summary: doc.summary };
    };
    const events = await outcome([], 'EV');
    const polled = await outcome(['--no-events'], 'POLL');
    // The stream was opened; whether its first event or a poll saw the outcome first is a race
    // on a busy machine (the pushes settle in a second), so only the sync above asks for an event.
    expect(askedStream(events.run)).toBe(true);
    expect(askedStream(polled.run)).toBe(false);
    expect(events.results.map((r: any) => [r.line, r.status])).toEqual([[1, 'Success'], [2, 'Failed']]);
    expect(polled.results).toEqual(events.results);
    expect(polled.summary).toEqual(events.summary);
  });

  it('check: the same verdict and criteria both ways', async () => {
    const verdicts = (run: InProcessResult) => JSON.parse(run.stdout).results.map((r: any) => [r.companyId, r.verdict, r.criteria.map((c: any) => [c.name, c.status])]);
    const events = await ferry(['-v', '--json', 'check', b.companyId, '--poll-ms', '50']);
    expect(events.code, events.stderr).toBe(0);
    expect(followedStream(events)).toBe(true);
    const polled = await ferry(['--json', 'check', b.companyId, '--poll-ms', '50', '--no-events']);
    expect(polled.code, polled.stderr).toBe(0);
    expect(verdicts(polled)).toEqual(verdicts(events));
    expect(verdicts(events)[0][1]).toBe('pass');
  });
});

describe('with the stream, an end is noticed at once however long the poll interval', () => {
  it(`sync --wait with a ${LONG_POLL_MS / 1000} s poll interval ends within seconds of the sync`, async () => {
    // Platform latency keeps the pull running well past the queuing, so the command has to wait.
    await patchSandbox(serve.sandboxUrl, { latencyMs: 300 });
    try {
      const run = await timed(ferry(['-v', '--json', 'sync', a.companyId, '--data-type', 'invoices', '--wait', '--timeout', '2m', '--poll-ms', String(LONG_POLL_MS)]));
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)[0]).toMatchObject({ state: 'complete', dataTypes: { invoices: 'Complete' } });
      expect(followedStream(run)).toBe(true);
      // The queuing answered the pull Queued; the status was read again (what ended the wait) long before the first poll was due.
      expect(run.stderr).toMatch(/POST \/companies\/[^/]+\/data\/queue\/invoices →[^]*\[events\] following the event stream[^]*GET \/companies\/[^/]+\/dataStatus →/);
      expect(run.ms).toBeLessThan(NOTICED_WITHIN_MS);
    } finally {
      await patchSandbox(serve.sandboxUrl, { latencyMs: 0 });
    }
  });

  it(`push --wait with a ${LONG_POLL_MS / 1000} s poll interval ends within seconds of the operation settling`, async () => {
    await patchSandbox(serve.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 1 });
    const file = pushFile('prompt.ndjson', [sampleInvoice(customerId, { invoiceNumber: 'PROMPT-1' })]);
    const run = await timed(ferry(['-v', '--json', 'push', 'invoices', '--company', a.companyId, '--connection', a.connectionId, '--file', file, '--wait', '--timeout', '2m', '--poll-ms', String(LONG_POLL_MS)]));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).results.map((r: any) => r.status)).toEqual(['Success']);
    expect(followedStream(run)).toBe(true);
    expect(run.ms).toBeLessThan(NOTICED_WITHIN_MS);
  });
});

describe('a target without the stream (the public API): the waits poll', () => {
  let proxy: PublicApiProxy;
  let viaProxy: string[];

  beforeAll(async () => {
    proxy = await startPublicApiProxy(serve.baseUrl);
    viaProxy = ['--base-url', proxy.url, '--api-key-file', target[3]!];
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('sync --wait and push --wait: the stream answers 404, and the same results come by polling', async () => {
    const sync = await ferryInProcess([...viaProxy, '-v', '--json', 'sync', b.companyId, '--wait', '--timeout', '90s', '--poll-ms', '50']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout)[0]).toMatchObject({ companyId: b.companyId, state: 'complete', ok: true });
    expect(sync.stderr).toContain('[events] the target has no event stream; waiting by polling');
    expect(proxy.requests).toContainEqual({ method: 'GET', path: expect.stringMatching(/^\/events\/stream\?/) });

    await patchSandbox(serve.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 1 });
    const file = pushFile('proxy.ndjson', [sampleInvoice(customerId, { invoiceNumber: 'PROXY-1' })]);
    const push = await ferryInProcess([...viaProxy, '-v', '--json', 'push', 'invoices', '--company', a.companyId, '--connection', a.connectionId, '--file', file, '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(push.code, push.stderr).toBe(0);
    expect(JSON.parse(push.stdout).results.map((r: any) => r.status)).toEqual(['Success']);
    expect(push.stderr).toContain('[events] the target has no event stream; waiting by polling');
  });
});
