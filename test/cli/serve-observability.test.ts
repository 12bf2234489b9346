// `ferry serve --metrics-port 0 --log-format json` (in this process, as the binary runs it)
// through a sync, a push, webhook deliveries and the failures an operator acts on, read as
// the operator's tools read it: the listening line names the metrics URL; the metrics
// agree with what the service lists (pulls completed, records, pushes, deliveries); the log
// is one JSON object a line, a line per request whose correlation id is the answer's
// header and its error body's, and a line per failure; and no secret that went through
// the service appears in any line.
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logFormatOf } from '../../src/cli/serve/observe.js';
import type { IO } from '../../src/cli/io.js';
import { closeServer, listenOn } from '../helpers/processes.js';
import { basic, tempDir } from '../helpers/service.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { linkedCompany, sampleInvoice, waitFor, type Api } from '../helpers/sync.js';
import { getJson, jsonLines, scrape, total } from '../helpers/observability.js';
import { startReceiver, type Receiver } from '../webhooks/support.js';

const INVOICES = 7;

describe('ferry serve for its operator', () => {
  let serve: ServeHandle;
  let api: Api;
  let metricsUrl: string;
  let clientKey: string;
  const secrets = new Set<string>();
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    serve = await startTestStack('serve', { args: ['--metrics-port', '0', '--log-format', 'json', '--webhook-allow-private'] });
    metricsUrl = serve.listening.metricsUrl!;
    const made = await serve.api.call('POST', '/admin/clients', { body: { name: 'Watched Ltd', plan: 'Paid' } });
    clientKey = made.body.apiKey;
    api = { ...serve.api, call: (method, path, options = {}) => serve.api.call(method, path, { apiKey: clientKey, ...options }) };
    for (const secret of [serve.adminKey, clientKey, readFileSync(join(serve.dataDir, 'secret.key'), 'utf8').trim()]) secrets.add(secret);
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close();
    await serve?.stop();
  });

  it('names its metrics URL, on 127.0.0.1, serving /metrics, /healthz and /readyz', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const base = metricsUrl.replace(/\/metrics$/, '');
    const { contentType, samples } = await scrape(metricsUrl);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(await getJson(`${base}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await getJson(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await request(`${base}/companies`)).statusCode).toBe(404);
  });

  it('counts the pulls, records, pushes and deliveries the service lists', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const consumer = await api.call('POST', '/webhooks', { body: { url: receiver.url, eventTypes: ['company.created', 'invoices.write.successful'] } });
    expect(consumer.status, consumer.text).toBe(201);
    secrets.add(consumer.body.secret);
    const linked = await linkedCompany(api, serve.sandboxUrl, 'gbol', INVOICES, { apiKey: clientKey, name: 'Synced Ltd' });
    for (const token of Object.values(linked.tenant.tokens)) secrets.add(token);
    expect((await api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
    const pulls = await waitFor('every pull to end', async () => {
      const history = await api.call('GET', `/companies/${linked.companyId}/data/history?pageSize=100`);
      const results = history.body.results as Array<{ status: string; dataType: string }>;
      return results.length > 0 && results.every((p) => !['Queued', 'Fetching', 'Mapping'].includes(p.status)) && results;
    }, 30_000, 200);
    const customers = await api.call('GET', `/companies/${linked.companyId}/data/customers?pageSize=1`);
    const pushed = await api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, { body: sampleInvoice(customers.body.results[0].id) });
    expect(pushed.status, pushed.text).toBe(200);

    const complete = pulls.filter((p) => p.status === 'Complete').length;
    expect(complete).toBeGreaterThan(0);
    await waitFor('the deliveries counted', async () => {
      const { samples } = await scrape(metricsUrl);
      return total(samples, 'ferry_webhook_deliveries_total', { outcome: 'delivered' }) === receiver.received.length && receiver.received.length >= 2;
    }, 20_000, 100);
    const { samples } = await scrape(metricsUrl);
    expect(total(samples, 'ferry_pulls_completed_total')).toBe(complete);
    expect(total(samples, 'ferry_pulls_completed_total', { data_type: 'invoices' })).toBe(1);
    expect(total(samples, 'ferry_pull_duration_seconds_count')).toBe(complete);
    expect(total(samples, 'ferry_records_ingested_total', { data_type: 'invoices' })).toBe(INVOICES);
    expect(total(samples, 'ferry_pulls_queued') + total(samples, 'ferry_pulls_running')).toBe(0);
    expect(total(samples, 'ferry_push_operations_total', { status: 'Success' })).toBe(1);
    expect(total(samples, 'ferry_webhook_deliveries_pending')).toBe(0);
    expect(total(samples, 'ferry_webhook_attempt_duration_seconds_count')).toBe(receiver.received.length);
  });

  it('logs a line for a pull that failed, a delivery that failed and the consumer it disabled', async () => {
    const gone = await startReceiver({ kind: 'status', status: 410 });
    receivers.push(gone);
    const consumer = await api.call('POST', '/webhooks', { body: { url: gone.url, eventTypes: ['company.created'] } });
    secrets.add(consumer.body.secret);
    const linked = await linkedCompany(api, serve.sandboxUrl, 'gbol', 2, { apiKey: clientKey, name: 'Revoked Ltd' });
    // The refresh token used twice: the platform revokes the grant, and the next pull finds it so.
    for (let i = 0; i < 2; i++) {
      const refreshed = await request(`${serve.sandboxUrl}/platforms/gbol/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: linked.tenant.tokens.refreshToken }),
      });
      const answer = (await refreshed.body.json()) as Record<string, string>;
      for (const key of ['access_token', 'refresh_token']) if (answer[key]) secrets.add(answer[key]);
    }
    for (const token of Object.values(linked.tenant.tokens)) secrets.add(token);
    expect((await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`)).status).toBe(200);
    const failed = await waitFor('the pull to fail', async () => {
      const history = await api.call('GET', `/companies/${linked.companyId}/data/history`);
      return history.body.results.find((p: { status: string }) => p.status === 'AuthError');
    }, 30_000, 200);
    await waitFor('the consumer disabled', async () => (await api.call('GET', `/webhooks/${consumer.body.id}`)).body.disabled === true, 20_000, 100);
    const lines = await waitFor('the three lines', async () => {
      const all = jsonLines(serveStderr());
      const events = new Map(all.filter((l) => l.event && l.event !== 'request').map((l) => [`${l.event}:${l.pullId ?? l.consumerId}`, l]));
      const wanted = [`pull.failed:${failed.id}`, `webhook.delivery_failed:${consumer.body.id}`, `webhook.consumer_disabled:${consumer.body.id}`].map((k) => events.get(k));
      return wanted.every(Boolean) && wanted;
    }, 10_000, 100);
    expect(lines[0]).toMatchObject({ level: 'warn', status: 'AuthError', companyId: linked.companyId, dataType: 'invoices' });
    expect(lines[0]!.msg).toContain(`/companies/${linked.companyId}/data/history/${failed.id}`);
    expect(lines[1]).toMatchObject({ level: 'warn', statusCode: 410 });
    expect(lines[2]).toMatchObject({ level: 'warn', reason: 'The receiver answered 410 Gone.' });
    const { samples } = await scrape(metricsUrl);
    expect(total(samples, 'ferry_pulls_failed_total', { data_type: 'invoices', status: 'AuthError' })).toBe(1);
    expect(total(samples, 'ferry_webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
    expect(total(samples, 'ferry_webhook_consumers_disabled_total')).toBe(1);
  });

  it('logs one line per request, its correlation id the answer\'s header and its error body\'s', async () => {
    const missing = await api.call('GET', '/companies/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    const id = missing.headers.get('x-correlation-id');
    expect(missing.body.correlationId).toBe(id);
    const fine = await api.call('GET', '/profile');
    const lines = jsonLines(serveStderr());
    const line = lines.find((l) => l.correlationId === id);
    expect(line).toMatchObject({
      level: 'info', event: 'request', method: 'GET', route: '/companies/:companyId', path: '/companies/00000000-0000-4000-8000-000000000000', status: 404,
    });
    expect(line!.clientId).toBe((await api.call('GET', '/profile')).body.clientId);
    expect(typeof line!.durationMs).toBe('number');
    expect(line!.bytes).toBe(Buffer.byteLength(missing.text));
    expect(line!.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(lines.filter((l) => l.correlationId === fine.headers.get('x-correlation-id'))).toHaveLength(1);
    // Every request answered so far has its line, as many as the metrics count.
    const { samples } = await scrape(metricsUrl);
    const counted = total(samples, 'ferry_http_requests_total');
    await waitFor('every line written', async () => jsonLines(serveStderr()).filter((l) => l.event === 'request').length === counted);

    // An answer written on the bare socket (not HTTP/1.1) has its line too, by the id it carried.
    const raw = await rawExchange(serve.baseUrl, 'NOT HTTP AT ALL\r\n\r\n');
    const rawId = /x-correlation-id: (\S+)/i.exec(raw)?.[1];
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(rawId).toBeTruthy();
    const rawLine = await waitFor('its line', async () => jsonLines(serveStderr()).find((l) => l.correlationId === rawId));
    expect(rawLine).toMatchObject({ event: 'request', route: 'unmatched', status: 400 });
  });

  it('never logs a key, a token, a webhook secret or an Authorization header', async () => {
    // A key that is not one (401) and the admin key acting for the client: their headers too.
    const wrong = `fy_${'x'.repeat(32)}`;
    await api.call('GET', '/companies', { apiKey: wrong });
    await serve.api.call('GET', '/companies', { headers: { 'x-client-id': (await api.call('GET', '/profile')).body.clientId } });
    const values = [...secrets, wrong].filter((s) => s.length >= 8);
    const headers = values.flatMap((s) => [basic(s).replace(/^Basic /, ''), Buffer.from(s).toString('base64')]);
    const stderr = serveStderr();
    expect(jsonLines(stderr).length).toBeGreaterThan(20);
    expect(values.length).toBeGreaterThanOrEqual(8);
    for (const value of [...values, ...headers]) expect(stderr.includes(value), `a secret in the log: ${value.slice(0, 6)}…`).toBe(false);
    // Requests are logged field by field: never a request's headers, whole.
    expect(jsonLines(stderr).filter((l) => 'req' in l || 'headers' in l)).toEqual([]);
  });

  const serveStderr = () => serve.stderr();
});

/** Writes `text` on a connection of its own and reads everything until the server closes it. */
function rawExchange(baseUrl: string, text: string): Promise<string> {
  const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('close', () => resolve(answer));
    socket.write(text);
  });
}

describe('the log format', () => {
  const io = (stderrIsTTY: boolean) => ({ stderrIsTTY }) as IO;

  it('is JSON when stderr is not a terminal, readable lines when it is, and as the flag says', () => {
    expect(logFormatOf({}, io(false))).toBe('json');
    expect(logFormatOf({}, io(true))).toBe('pretty');
    expect(logFormatOf({ logFormat: 'json' }, io(true))).toBe('json');
    expect(logFormatOf({ logFormat: 'off' }, io(false))).toBe('off');
  });

  it.each([
    { format: 'pretty', line: /^\d{2}:\d{2}:\d{2}\.\d{3} INFO {2}GET \/healthz 200 in [\d.]+ ms {2}event=request .*correlationId=[0-9a-f-]{36}/m },
    { format: 'off', line: undefined },
  ])('--log-format $format', async ({ format, line }) => {
    const serve = await startTestStack('serve', { args: ['--log-format', format, '--log-level', 'info'] });
    let stderr: string;
    try {
      expect((await getJson(`${serve.baseUrl}/healthz`)).status).toBe(200);
      await waitFor('the line', async () => !line || line.test(serve.stderr()));
    } finally {
      stderr = (await serve.stop()).stderr;
    }
    if (line) expect(stderr).toMatch(line);
    else expect(stderr).not.toContain('/healthz');
    expect(stderr).not.toMatch(/^\{/m);
  });

  it('--log-level warn leaves the request lines out, and a value it does not know is refused', async () => {
    const serve = await startTestStack('serve', { args: ['--log-level', 'warn'] });
    let stderr: string;
    try {
      await getJson(`${serve.baseUrl}/healthz`);
    } finally {
      stderr = (await serve.stop()).stderr;
    }
    expect(stderr).not.toContain('"event":"request"');
    const { ferry } = await import('../helpers/in-process.js');
    const refused = await ferry(['serve', '--log-level', 'loud']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--log-level must be one of debug, info, warn, error.');
  });
});

describe('the metrics port flags', () => {
  it('refuses a port that is not one (exit 2) and names the metrics port when it is taken (exit 1)', async () => {
    const { ferry } = await import('../helpers/in-process.js');
    const bad = await ferry(['serve', '--metrics-port', 'ninety']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--metrics-port must be a whole number from 0 to 65535.');
    const taken = await listenOn(0);
    const { port } = taken.address() as { port: number };
    const dataDir = tempDir('ferry-metrics-port-');
    try {
      const refused = await ferry(['serve', '--port', '0', '--metrics-port', String(port), '--data-dir', dataDir, '--log-format', 'off']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use.`);
      expect(refused.stderr).toContain('--metrics-port');
    } finally {
      await closeServer(taken);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a stop', () => {
  it('answers /readyz 503 from SIGTERM while a request in flight finishes, then exits 0', async () => {
    const serve = await startTestStack('serve', { args: ['--log-format', 'off'] });
    const { port } = new URL(serve.baseUrl);
    const body = JSON.stringify({ name: 'Finished while draining' });
    const socket = connect(Number(port), '127.0.0.1');
    const answered = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
    });
    // The request's headers and half its body: in flight until the rest comes.
    socket.write(`POST /companies HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(serve.adminKey)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
    await waitFor('the request in flight', async () => (await getJson(`${serve.baseUrl}/readyz`)).status === 200);
    const stopped = serve.stop('SIGTERM');
    const draining = await waitFor('readyz to say so', async () => {
      const ready = await getJson(`${serve.baseUrl}/readyz`);
      return ready.status === 503 && ready;
    });
    expect(draining.body).toEqual({ status: 'not ready', reasons: ['shutting down: finishing the work in flight'] });
    // Still alive, and still serving what comes while it drains.
    expect((await getJson(`${serve.baseUrl}/healthz`)).status).toBe(200);
    socket.write(body.slice(10));
    expect(await answered).toMatch(/^HTTP\/1\.1 200 OK/);
    const result = await stopped;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stopping: /readyz answers 503; finishing in-flight requests…');
  });
});
