// The client's reader of the event stream: the text/event-stream parser (WHATWG rules, fed
// chunks split anywhere) and streamEvents against real HTTP servers on 127.0.0.1 (a
// scripted one for drops, 404s and refusals; ferry's service for the real thing).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiClient } from '../../src/client/client.js';
import { latestEventSequence, listEvents } from '../../src/client/api.js';
import { ApiRequestError, StreamUnavailableError } from '../../src/client/errors.js';
import { MAX_RECONNECTS, streamEvents, type StreamedEvent } from '../../src/client/event-stream.js';
import { SseParser, type SseMessage } from '../../src/client/sse.js';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack, type TestService } from '../helpers/stack.js';

function parseAll(chunks: Array<string | Uint8Array>): { messages: SseMessage[]; parser: SseParser } {
  const parser = new SseParser();
  const messages = chunks.flatMap((c) => parser.push(c));
  return { messages, parser };
}

/** `text` as bytes cut at the given offsets (anywhere, even inside a UTF-8 character). */
function cut(text: string, offsets: number[]): Uint8Array[] {
  const bytes = Buffer.from(text, 'utf8');
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  return chunks;
}

describe('SseParser', () => {
  it('reads fields, joins data lines with LF, and dispatches on a blank line', () => {
    const { messages, parser } = parseAll(['id: 7\nevent: company.created\ndata: {"a":1,\ndata: "b":2}\n\n']);
    expect(messages).toEqual([{ type: 'company.created', data: '{"a":1,\n"b":2}', lastEventId: '7' }]);
    expect(parser.lastEventId).toBe('7');
  });

  it('takes CRLF, LF and CR line ends alike, and a CR and LF split across chunks as one', () => {
    const expected = [{ type: 'x', data: 'one\ntwo', lastEventId: '1' }, { type: 'message', data: 'three', lastEventId: '1' }];
    expect(parseAll(['id: 1\r\nevent: x\r\ndata: one\r\ndata: two\r\n\r\ndata: three\r\n\r\n']).messages).toEqual(expected);
    expect(parseAll(['id: 1\revent: x\rdata: one\rdata: two\r\rdata: three\r\r']).messages).toEqual(expected);
    expect(parseAll(['id: 1\r', '\nevent: x\r', '\ndata: one\r', '\ndata: two\r', '\n\r', '\ndata: three\r', '\n\r', '\n']).messages).toEqual(expected);
    // A CR at a chunk's end followed by something else is a line end of its own.
    expect(parseAll(['data: a\r', 'data: b\r', '\r']).messages).toEqual([{ type: 'message', data: 'a\nb', lastEventId: '' }]);
  });

  it('ignores comments, unknown fields and a field without a colon; strips one space after the colon only', () => {
    const { messages, parser } = parseAll([': keep-alive\n\nfoo: bar\ndata\ndata:  two spaces\nretry: 1500\nretry: soon\n\n']);
    expect(messages).toEqual([{ type: 'message', data: '\n two spaces', lastEventId: '' }]);
    expect(parser.retryMs).toBe(1500);
  });

  it('an id without data moves the last event id and dispatches nothing; an id with NUL is ignored', () => {
    const { messages, parser } = parseAll(['id: 41\n\n', 'id: 4\u00002\n\n']);
    expect(messages).toEqual([]);
    expect(parser.lastEventId).toBe('41');
    // A later message without an id carries the last one.
    expect(parser.push('data: x\n\n')).toEqual([{ type: 'message', data: 'x', lastEventId: '41' }]);
  });

  it('drops a leading BOM, and a partial message at the end of the stream', () => {
    const { messages } = parseAll([Buffer.from([0xef, 0xbb]), Buffer.from([0xbf]), 'data: é\n\ndata: never finished\n']);
    expect(messages).toEqual([{ type: 'message', data: 'é', lastEventId: '' }]);
  });

  it('gives the same messages however the bytes are cut', () => {
    const stream = ': hello\r\nid: 1\r\nevent: read.completed\r\ndata: {"name":"Ünïcödé 💶"}\r\n\r\nid: 2\nevent: a.b\ndata: line one\ndata: line two\n\n: keep-alive\n\nid: 3\rdata: {"x":"\\n"}\r\r';
    const whole = parseAll([stream]).messages;
    expect(whole.map((m) => m.lastEventId)).toEqual(['1', '2', '3']);
    expect(whole[1]!.data).toBe('line one\nline two');
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
      expect(parseAll(cut(stream, offsets)).messages).toEqual(whole);
    }));
    // Every single byte in its own chunk, too.
    expect(parseAll([...Buffer.from(stream, 'utf8')].map((b) => Uint8Array.of(b))).messages).toEqual(whole);
  });

  it('refuses a message that never ends', () => {
    const parser = new SseParser();
    expect(() => {
      for (let i = 0; i < 20; i += 1) parser.push(`data: ${'x'.repeat(1024 * 1024)}\n`);
    }).toThrow(/without ending a message/);
  });
});

// ---------------------------------------------------------------- streamEvents

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A server that answers the n-th request with `handler`, recording each request's Last-Event-ID and query. */
async function scripted(handler: Handler): Promise<{ url: string; requests: Array<{ path: string; lastEventId?: string }>; close(): Promise<void> }> {
  const requests: Array<{ path: string; lastEventId?: string }> = [];
  const server: Server = createServer((req, res) => {
    const header = req.headers['last-event-id'];
    requests.push({ path: req.url ?? '', ...(typeof header === 'string' ? { lastEventId: header } : {}) });
    handler(req, res, requests.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const eventText = (seq: number, type = 'company.created') =>
  `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ id: `evt-${seq}`, eventType: type, generatedDate: '2026-11-25T10:00:00Z', payload: { n: seq } })}\n\n`;

async function take(stream: AsyncGenerator<StreamedEvent>, count: number): Promise<StreamedEvent[]> {
  const out: StreamedEvent[] = [];
  for await (const item of stream) {
    out.push(item);
    if (out.length === count) break;
  }
  return out;
}

describe('streamEvents', () => {
  it('yields sequence and event, and after a dropped connection resumes after the last one (Last-Event-ID)', async () => {
    const server = await scripted((_req, res, n) => {
      sse(res);
      if (n === 1) {
        res.write('id: 10\n\n'); // the starting point
        res.write(eventText(11));
        res.write(eventText(12).slice(0, 20));
        setImmediate(() => res.socket?.destroy()); // dropped mid-message: 12 is sent again
      } else if (n === 2) {
        res.write(eventText(12) + eventText(13));
        res.end(); // the service closing: reconnect again
      } else {
        res.write('id: 13\n\n');
        res.write(eventText(14, 'read.completed'));
      }
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    const controller = new AbortController();
    try {
      const got = await take(streamEvents(client, { types: ['company.created', 'read.completed'], companyId: 'c 1', after: 10, signal: controller.signal }), 4);
      expect(got.map((g) => g.sequence)).toEqual([11, 12, 13, 14]);
      expect(got[3]!.event).toEqual({ id: 'evt-14', eventType: 'read.completed', generatedDate: '2026-11-25T10:00:00Z', payload: { n: 14 } });
      expect(server.requests.map((r) => r.lastEventId)).toEqual(['10', '11', '13']);
      expect(server.requests[0]!.path).toBe('/events/stream?types=company.created%2Cread.completed&companyId=c%201');
    } finally {
      controller.abort();
      await client.close();
      await server.close();
    }
  });

  it('without `after` sends no Last-Event-ID at first, then resumes from the starting point the stream gave', async () => {
    const server = await scripted((_req, res, n) => {
      sse(res);
      if (n === 1) {
        res.write('id: 5\n\n');
        setImmediate(() => res.socket?.destroy());
      } else res.write(eventText(6));
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    const controller = new AbortController();
    try {
      const [first] = await take(streamEvents(client, { signal: controller.signal }), 1);
      expect(first!.sequence).toBe(6);
      expect(server.requests.map((r) => r.lastEventId)).toEqual([undefined, '5']);
    } finally {
      controller.abort();
      await client.close();
      await server.close();
    }
  });

  it('throws StreamUnavailableError when the target has no stream (404)', async () => {
    const server = await scripted((req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: 404, error: `No route GET ${req.url}.` }));
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    try {
      await expect(take(streamEvents(client, { signal: new AbortController().signal }), 1)).rejects.toBeInstanceOf(StreamUnavailableError);
      // With a company: the catalogue route says whether it is the stream or the company that is missing.
      await expect(take(streamEvents(client, { companyId: 'x', signal: new AbortController().signal }), 1)).rejects.toBeInstanceOf(StreamUnavailableError);
    } finally {
      await client.close();
      await server.close();
    }
    const html = await scripted((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html>not here</html>');
    });
    const htmlClient = new ApiClient({ baseUrl: html.url, apiKey: 'k' });
    try {
      await expect(take(streamEvents(htmlClient, { signal: new AbortController().signal }), 1)).rejects.toBeInstanceOf(StreamUnavailableError);
    } finally {
      await htmlClient.close();
      await html.close();
    }
  });

  it('gives up after MAX_RECONNECTS failed reconnections in a row, with the last error', async () => {
    const server = await scripted((_req, res, n) => {
      if (n === 1) {
        sse(res);
        res.write(eventText(1));
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(JSON.stringify({ statusCode: 503, error: 'Service unavailable' }));
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    try {
      const seen: number[] = [];
      const run = async () => {
        for await (const { sequence } of streamEvents(client, { signal: new AbortController().signal })) seen.push(sequence);
      };
      const err = await run().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiRequestError);
      expect((err as ApiRequestError).status).toBe(503);
      expect(seen).toEqual([1]);
      expect(server.requests).toHaveLength(1 + MAX_RECONNECTS); // the first connection, then MAX_RECONNECTS attempts
      expect(server.requests.slice(1).every((r) => r.lastEventId === '1')).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('ends quietly when the signal aborts, while waiting for an event', async () => {
    const server = await scripted((_req, res) => {
      sse(res);
      res.write('id: 1\n\n');
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    const controller = new AbortController();
    try {
      const done = take(streamEvents(client, { signal: controller.signal }), 1);
      await new Promise<void>((resolve) => {
        const check = () => (server.requests.length > 0 ? resolve() : setImmediate(check));
        check();
      });
      controller.abort();
      await expect(done).resolves.toEqual([]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a refused first request is thrown at once (400, 401), not retried', async () => {
    const server = await scripted((_req, res, n) => {
      res.writeHead(n === 1 ? 400 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: n === 1 ? 400 : 401, error: 'no' }));
    });
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'k' });
    try {
      await expect(take(streamEvents(client, { types: ['x'], signal: new AbortController().signal }), 1)).rejects.toMatchObject({ status: 400 });
      await expect(take(streamEvents(client, { signal: new AbortController().signal }), 1)).rejects.toMatchObject({ status: 401 });
      expect(server.requests).toHaveLength(2);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('streamEvents against ferry\'s service', () => {
  let t: TestService;
  let client: ApiClient;
  let apiKey: string;

  beforeAll(async () => {
    t = await startTestStack('service');
    ({ apiKey } = await t.createClient('Reader', 'Paid'));
    client = new ApiClient({ baseUrl: t.baseUrl, apiKey });
  });
  afterAll(async () => {
    await client?.close();
    await t?.stop();
  });

  it('reads the events committed after `after`, filtered, as GET /events lists them', async () => {
    const after = await latestEventSequence(client);
    const made: string[] = [];
    for (const name of ['One', 'Two']) made.push((await t.call('POST', '/companies', { apiKey, body: { name } })).body.id);
    await t.call('DELETE', `/companies/${made[0]}`, { apiKey });
    const controller = new AbortController();
    const got = await take(streamEvents(client, { types: ['company.created'], after, signal: controller.signal }), 2);
    controller.abort();
    expect(got.map((g) => g.event.payload.id)).toEqual(made);
    const listed = await listEvents(client, after, 10);
    expect(listed.results.filter((e) => e.eventType === 'company.created').map(({ sequence, ...event }) => ({ sequence, event }))).toEqual(got);
  });

  it('the numbers are the account\'s own: the first event of a new account is 1, whatever others did', async () => {
    const fresh = await t.createClient('Fresh', 'Paid');
    const reader = new ApiClient({ baseUrl: t.baseUrl, apiKey: fresh.apiKey });
    try {
      expect(await latestEventSequence(reader)).toBe(0);
      await t.call('POST', '/companies', { apiKey, body: { name: 'Someone else\'s' } });
      expect(await latestEventSequence(reader)).toBe(0);
      const controller = new AbortController();
      const events = take(streamEvents(reader, { after: 0, signal: controller.signal }), 1);
      await t.call('POST', '/companies', { apiKey: fresh.apiKey, body: { name: 'Its first' } });
      expect((await events).map((e) => e.sequence)).toEqual([1]);
      controller.abort();
    } finally {
      await reader.close();
    }
  });

  it('a key at its cap of open streams: the 429 is thrown at once, with Retry-After and the service\'s words', async () => {
    const capped = await t.createClient('Capped', 'Paid');
    const holders = await Promise.all(Array.from({ length: 10 }, () => openStream(t.baseUrl, capped.apiKey, '/events/stream')));
    const reader = new ApiClient({ baseUrl: t.baseUrl, apiKey: capped.apiKey });
    try {
      expect(holders.map((h) => h.status)).toEqual(Array(10).fill(200));
      const err = await take(streamEvents(reader, { signal: new AbortController().signal }), 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiRequestError);
      expect((err as ApiRequestError).status).toBe(429);
      expect((err as ApiRequestError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect((err as Error).message).toMatch(/at most 10 per API key/);
    } finally {
      for (const holder of holders) holder.close();
      await reader.close();
    }
  });

  it('a company of another account: the 403 is thrown; an unknown company: the 404 is, not StreamUnavailableError', async () => {
    const other = await t.createClient('Other', 'Paid');
    const theirs = (await t.call('POST', '/companies', { apiKey: other.apiKey, body: { name: 'Theirs' } })).body.id;
    await expect(take(streamEvents(client, { companyId: theirs, signal: new AbortController().signal }), 1)).rejects.toMatchObject({ status: 403 });
    const err = await take(streamEvents(client, { companyId: 'no-such-company', signal: new AbortController().signal }), 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiRequestError);
    expect((err as ApiRequestError).status).toBe(404);
  });
});
