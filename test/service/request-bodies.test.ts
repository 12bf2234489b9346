// How the service receives requests, over bare sockets (test/helpers/raw-http.ts): a request
// that does not arrive in full within the request timeout gets 408 with the error envelope
// and the connection is closed; long-lived responses (the event stream) are not cut by it;
// a body the service refuses (no key, unknown route, too large, a refused upload) is
// answered at once with `Connection: close` and not read to its end; and a client that
// gives up mid-body is no database outage.
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BYTES, MAX_BODY_BYTES } from '../../src/platforms/limits.js';
import { rawRequest, type RawOutcome } from '../helpers/raw-http.js';
import { basic, type CallResult } from '../helpers/service.js';
import { startTestStack, type Harness, type TestService } from '../helpers/stack.js';
import { createClient, linkedCompany, readAll, waitFor, type Linked } from '../helpers/sync.js';
import { expectErrorBody } from './support.js';

const MiB = 1024 * 1024;
/** The flood a refusing client sends: far more than anything the service reads. */
const FLOOD = 100 * MiB;
/**
 * What may be written before the answer and the close: what the service reads before it
 * refuses (at most an attachment's 10 MiB) plus what the sockets' buffers hold on the way.
 */
const READ_AT_MOST = 32 * MiB;
const REQUEST_TIMEOUT_MS = 1000;

function answer(outcome: RawOutcome): CallResult {
  expect(outcome.response, `no answer (closed: ${outcome.closed}, sent ${outcome.sentAtClose})`).toBeDefined();
  return outcome.response!;
}

describe('a request that does not arrive in time', () => {
  let t: TestService;
  let apiKey: string;

  beforeAll(async () => {
    t = await startTestStack('service', { requestTimeoutMs: REQUEST_TIMEOUT_MS, eventHeartbeatMs: 100 });
    apiKey = (await t.createClient('Slow Ltd', 'Paid')).apiKey;
  });
  afterAll(async () => t?.stop());

  it('a JSON body trickled a byte at a time: 408 with the error envelope, and the connection closed', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'Trickled Ltd', description: 'x'.repeat(60) }));
    const outcome = await rawRequest(t.baseUrl, {
      method: 'POST', path: '/companies', headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
      body: { trickle: body, everyMs: 100 }, deadlineMs: 15_000,
    });
    const response = answer(outcome);
    expectErrorBody(response, 408);
    expect(response.headers.get('connection')).toBe('close');
    expect(outcome.closed).toBe(true);
    expect(outcome.bodyDone).toBe(false);
    // Nothing of it was made.
    const list = await t.call('GET', '/companies', { apiKey });
    expect(list.body.results).toEqual([]);
  });

  it('headers trickled a byte at a time: 408 and closed', async () => {
    const outcome = await rawRequest(t.baseUrl, {
      method: 'GET', path: '/companies', headers: { authorization: basic(apiKey), 'x-padding': 'p'.repeat(100) }, trickleHeadMs: 20, deadlineMs: 15_000,
    });
    expect(answer(outcome).status).toBe(408);
    expect(outcome.closed).toBe(true);
  });

  it('the event stream, a response, stays open long past the request timeout', async () => {
    const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
    let text = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('close', () => (closed = true));
    socket.write(`GET /events/stream HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${basic(apiKey)}\r\n\r\n`);
    const opened = Date.now();
    try {
      await waitFor('three request timeouts of heartbeats', async () => closed || (Date.now() - opened > 3 * REQUEST_TIMEOUT_MS && text.split(': keep-alive').length > 10), 20_000);
      expect(closed).toBe(false);
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      // No 408 status line (a bare '408' would also match the correlation id or a date).
      expect(text).not.toMatch(/^HTTP\/1\.1 408 /m);
    } finally {
      socket.destroy();
    }
  });
});

describe('a body the service refuses is answered at once and not read to its end', () => {
  let h: Harness;
  let apiKey: string;
  let linked: Linked;
  let invoiceId: string;
  const notices: string[] = [];
  const internal: unknown[] = [];

  beforeAll(async () => {
    h = await startTestStack('fake-clocks', {
      service: { onNotice: (message) => notices.push(message), onInternalError: (err) => internal.push(err) },
    });
    apiKey = await createClient(h.api, h.adminKey, 'Refused Ltd', 'Paid');
    linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2, { apiKey });
    expect((await h.api.call('POST', `/companies/${linked.companyId}/data/all`, { apiKey })).status).toBe(204);
    await h.drain();
    invoiceId = (await readAll(h.api, linked.companyId, 'invoices', { apiKey }))[0].id;
  });
  afterAll(async () => h?.stop());

  const attachmentPath = () => `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices/${encodeURIComponent(invoiceId)}/attachment`;
  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, () => { path: string; headers: Record<string, string>; prefix?: Buffer }, number]> = [
    ['no key', () => ({ path: '/companies', headers: json }), 401],
    ['an unknown key', () => ({ path: '/companies', headers: { ...json, authorization: basic('not-a-key') } }), 401],
    ['an unknown route', () => ({ path: '/no/such/route', headers: { ...json, authorization: basic(apiKey) } }), 404],
    ['a JSON body past the 1 MiB limit', () => ({ path: '/companies', headers: { ...json, authorization: basic(apiKey) } }), 400],
    ['a raw upload past the 10 MiB limit', () => ({
      path: `${attachmentPath()}?fileName=big.bin`, headers: { 'content-type': 'application/octet-stream', authorization: basic(apiKey) },
    }), 400],
    ['a multipart upload past the 10 MiB limit', () => ({
      path: attachmentPath(), headers: { 'content-type': 'multipart/form-data; boundary=b0undary', authorization: basic(apiKey) },
      prefix: Buffer.from('--b0undary\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'),
    }), 400],
    ['an upload to a record that does not exist', () => ({
      path: `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices/no-such-invoice/attachment?fileName=a.bin`,
      headers: { 'content-type': 'application/octet-stream', authorization: basic(apiKey) },
    }), 404],
  ];

  it.each(cases)('%s: 100 MiB chunked gets its answer with Connection: close, and the server stops reading', async (_name, make, status) => {
    const { path, headers, prefix } = make();
    const outcome = await rawRequest(h.baseUrl, { method: 'POST', path, headers, body: { flood: FLOOD, ...(prefix ? { prefix } : {}) } });
    const response = answer(outcome);
    expectErrorBody(response, status);
    expect(response.headers.get('connection')).toBe('close');
    expect(outcome.closed).toBe(true);
    expect(outcome.bodyDone).toBe(false);
    expect(outcome.sentAtAnswer).toBeLessThan(READ_AT_MOST);
    expect(outcome.sentAtClose).toBeLessThan(READ_AT_MOST);
    expect(READ_AT_MOST).toBeGreaterThan(MAX_ATTACHMENT_BYTES + MAX_BODY_BYTES);
  });

  it('a refused small body of declared length is read, and the connection serves the next request', async () => {
    const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1');
    let received = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => (closed = true));
    const answers = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    try {
      const body = JSON.stringify({ name: 'n'.repeat(60_000) });
      socket.write(`POST /companies HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      await waitFor('the refusal', async () => closed || answers().length === 1);
      expect(answers()).toEqual([401]);
      expect(received).not.toMatch(/^connection: close/im);
      socket.write(`GET /companies HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${basic(apiKey)}\r\n\r\n`);
      await waitFor('the next answer', async () => closed || answers().length === 2);
      expect(answers()).toEqual([401, 200]);
    } finally {
      socket.destroy();
    }
  });

  it('a client that gives up mid-body with a valid key: no outage, nothing internal, the next request served', async () => {
    const bodies: IncomingMessage[] = [];
    const seen = (request: IncomingMessage) => bodies.push(request);
    h.service.app.server.on('request', seen);
    try {
      for (const path of ['/companies', `${attachmentPath()}?fileName=cut.bin`]) {
        bodies.length = 0;
        const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${basic(apiKey)}\r\ncontent-type: ${path === '/companies' ? 'application/json' : 'application/octet-stream'}\r\ncontent-length: 1000\r\n\r\n{"name":"`);
        // Cut off once the service reads the body (its parser listens for the rest).
        const request = await waitFor('the body being read', async () => bodies.find((r) => r.listenerCount('data') + r.listenerCount('readable') > 0));
        socket.destroy();
        await waitFor('the service to see the client go', async () => request.destroyed);
        const next = await h.api.call('GET', '/companies', { apiKey });
        expect(next.status).toBe(200);
      }
    } finally {
      h.service.app.server.off('request', seen);
    }
    expect(notices.filter((notice) => /database/.test(notice))).toEqual([]);
    expect(internal.map(String)).toEqual([]);
  });
});
