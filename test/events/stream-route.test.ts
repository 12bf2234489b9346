// The service's event routes on a real service (127.0.0.1, the test run's store):
// GET /events/types, GET /events (pages after a sequence number) and GET /events/stream
// (server-sent events: resume with Last-Event-ID or ?after=, filters, 4xx before the
// stream starts, another account's events never seen and its activity never moving this
// one's numbers, heartbeats, a reader that does not read, a stream counted once by the
// rate limit, and close() that does not wait for open streams). Caps and revoked keys:
// stream-limits.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SseMessage } from '../../src/client/sse.js';
import { EVENT_TYPES } from '../../src/service/events/catalogue.js';
import { eventsOf, recordEvent } from '../../src/service/events/record.js';
import { openStream, type Reader } from '../helpers/sse-reader.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { FakeClock } from '../helpers/sync.js';

describe('event routes', () => {
  let t: TestService;
  let keyA: string;
  let keyB: string;
  let clientA: string;
  let clientB: string;

  const createCompany = async (apiKey: string, name: string): Promise<string> => {
    const result = await t.call('POST', '/companies', { apiKey, body: { name } });
    expect(result.status).toBe(200);
    return result.body.id as string;
  };
  const list = async (apiKey: string, query: string) => t.call('GET', `/events${query}`, { apiKey });
  const head = async (apiKey: string) => (await list(apiKey, '?limit=0')).body.lastSequence as number;
  /** The account's event with that number, as stored. */
  const stored = async (clientId: string, sequence: number) => (await t.service.store.eventsAfter(clientId, sequence - 1, 1)).find((e) => e.account_seq === sequence);
  const eventBodies = (reader: Reader) => reader.messages.map((m) => JSON.parse(m.data));

  beforeAll(async () => {
    t = await startTestStack('service', { eventHeartbeatMs: 50 });
    ({ id: clientA, apiKey: keyA } = await t.createClient('Stream A', 'Paid'));
    ({ id: clientB, apiKey: keyB } = await t.createClient('Stream B', 'Paid'));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('GET /events/types answers the catalogue', async () => {
    const result = await t.call('GET', '/events/types', { apiKey: keyA });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ results: [...EVENT_TYPES] });
    expect(result.body.results).toContain('company.created');
  });

  it('GET /events lists the account\'s events after a sequence number, each as stored with its sequence', async () => {
    const start = await head(keyA);
    const first = await createCompany(keyA, 'Listed One');
    await createCompany(keyB, 'Not yours');
    const second = await createCompany(keyA, 'Listed Two');

    const all = await list(keyA, `?after=${start}`);
    expect(all.status).toBe(200);
    expect(all.body.results.map((e: any) => [e.eventType, e.payload.id])).toEqual([['company.created', first], ['company.created', second]]);
    const [one, two] = all.body.results;
    expect(Object.keys(one)).toEqual(['sequence', 'id', 'eventType', 'generatedDate', 'payload']);
    expect(two.sequence).toBeGreaterThan(one.sequence);
    // Each entry is the stored event byte for byte, with its sequence number in front.
    const firstStored = (await stored(clientA, one.sequence))!;
    expect(all.text).toContain(`{"sequence":${one.sequence},${firstStored.body.slice(1)}`);
    // The list ran out: continuing from lastSequence skips nothing and repeats nothing.
    expect(all.body.lastSequence).toBeGreaterThanOrEqual(two.sequence);
    expect((await list(keyA, `?after=${all.body.lastSequence}`)).body.results).toEqual([]);

    // A full page continues after its last entry.
    const page = await list(keyA, `?after=${start}&limit=1`);
    expect(page.body.results).toHaveLength(1);
    expect(page.body.lastSequence).toBe(one.sequence);
    expect((await list(keyA, `?after=${page.body.lastSequence}&limit=1`)).body.results[0].payload.id).toBe(second);

    // limit=0: no events, and where the stream is now.
    const now = await list(keyA, '?limit=0');
    expect(now.body).toEqual({ results: [], lastSequence: await t.service.store.latestAccountEventSeq(clientA) });
  });

  it('GET /events refuses a bad after or limit (400 naming the parameter)', async () => {
    for (const query of ['?after=-1', '?after=x', '?limit=501', '?limit=1.5', '?after=1&after=2']) {
      const result = await list(keyA, query);
      expect(result.status, query).toBe(400);
      expect(result.body.validation.errors[0].itemId).toBe(query.includes('limit') ? 'limit' : 'after');
    }
  });

  it('the stream starts with the next event: id, event type and the stored body as data', async () => {
    await createCompany(keyA, 'Before the stream');
    const reader = await openStream(t.baseUrl, keyA, '/events/stream');
    expect(reader.status).toBe(200);
    expect(reader.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(reader.headers['cache-control']).toContain('no-cache');
    expect(reader.headers['x-correlation-id']).toEqual(expect.any(String));
    const companyId = await createCompany(keyA, 'Streamed Ltd');
    await reader.until('one event', () => reader.messages.length >= 1);
    const [message] = reader.messages;
    expect(message!.type).toBe('company.created');
    const event = (await stored(clientA, Number(message!.lastEventId)))!;
    expect(message!.data).toBe(event.body);
    expect(JSON.parse(message!.data)).toMatchObject({ eventType: 'company.created', payload: { id: companyId, name: 'Streamed Ltd' } });
    expect(reader.text()).toContain(`id: ${event.account_seq}\nevent: company.created\ndata: ${event.body}\n\n`);
    reader.close();
  });

  it('resumes after Last-Event-ID (or ?after=), in order, the header winning over the query', async () => {
    const start = await head(keyA);
    const ids = [await createCompany(keyA, 'R1'), await createCompany(keyA, 'R2'), await createCompany(keyA, 'R3')];
    const listed = (await list(keyA, `?after=${start}`)).body.results;
    const afterFirst = listed[0].sequence as number;

    const byHeader = await openStream(t.baseUrl, keyA, '/events/stream?after=0', { 'last-event-id': String(afterFirst) });
    await byHeader.until('two events', () => byHeader.messages.length >= 2);
    expect(eventBodies(byHeader).map((e) => e.payload.id)).toEqual(ids.slice(1));
    expect(byHeader.messages.map((m) => Number(m.lastEventId))).toEqual(listed.slice(1).map((e: any) => e.sequence));

    const byQuery = await openStream(t.baseUrl, keyA, `/events/stream?after=${start}`);
    await byQuery.until('three events', () => byQuery.messages.length >= 3);
    expect(eventBodies(byQuery).map((e) => e.payload.id)).toEqual(ids);

    // Then live ones follow the backlog.
    const later = await createCompany(keyA, 'R4');
    await byQuery.until('the live event', () => byQuery.messages.length >= 4);
    expect(eventBodies(byQuery)[3].payload.id).toBe(later);
    // Each stream hears the event on its own; wait for this one too.
    await byHeader.until('the live event', () => byHeader.messages.length >= 3);
    expect(eventBodies(byHeader).at(-1).payload.id).toBe(later);
    byHeader.close();
    byQuery.close();
  });

  it('sends its starting point as an id without data, so a reconnect before the first event misses nothing', async () => {
    const start = await head(keyA);
    const reader = await openStream(t.baseUrl, keyA, '/events/stream');
    await reader.until('the starting id', () => reader.text().includes('\n\n'));
    expect(reader.text().startsWith(`id: ${start}\n\n`)).toBe(true);
    expect(reader.messages).toEqual([]);
    reader.close();
  });

  it('never shows another account\'s events, whatever the starting point', async () => {
    const readerA = await openStream(t.baseUrl, keyA, '/events/stream?after=0');
    const readerB = await openStream(t.baseUrl, keyB, '/events/stream?after=0');
    const mineA = await createCompany(keyA, 'Only A sees this');
    const mineB = await createCompany(keyB, 'Only B sees this');
    await readerA.until('A\'s event', () => eventBodies(readerA).some((e) => e.payload.id === mineA));
    await readerB.until('B\'s event', () => eventBodies(readerB).some((e) => e.payload.id === mineB));
    // Each message is the reader's own account's event of that number.
    const ownEvents = (clientId: string, messages: SseMessage[]) =>
      Promise.all(messages.map(async (m) => (await stored(clientId, Number(m.lastEventId)))?.body === m.data));
    expect(await ownEvents(clientA, readerA.messages)).not.toContain(false);
    expect(await ownEvents(clientB, readerB.messages)).not.toContain(false);
    expect(readerA.text()).not.toContain(mineB);
    expect(readerB.text()).not.toContain(mineA);
    readerA.close();
    readerB.close();
  });

  it('numbers each account\'s events on their own: another account\'s activity moves neither its lastSequence nor its ids', async () => {
    const { apiKey: keyC } = await t.createClient('Quiet C', 'Paid');
    expect(await head(keyC)).toBe(0);
    const reader = await openStream(t.baseUrl, keyC, '/events/stream');
    await reader.until('the starting id', () => reader.text().includes('\n\n'));
    expect(reader.text().startsWith('id: 0\n\n')).toBe(true);

    for (let i = 0; i < 5; i += 1) await createCompany(keyB, `Busy B ${i}`);
    expect(await head(keyC)).toBe(0);
    expect((await list(keyC, '?after=0')).body).toEqual({ results: [], lastSequence: 0 });
    const first = await createCompany(keyC, 'Quiet One');
    for (let i = 0; i < 3; i += 1) await createCompany(keyA, `Busy A ${i}`);
    const second = await createCompany(keyC, 'Quiet Two');

    await reader.until('two events', () => reader.messages.length >= 2);
    expect(reader.messages.map((m) => m.lastEventId)).toEqual(['1', '2']);
    expect(eventBodies(reader).map((e) => e.payload.id)).toEqual([first, second]);
    const listed = await list(keyC, '?after=0');
    expect(listed.body.results.map((e: any) => [e.sequence, e.payload.id])).toEqual([[1, first], [2, second]]);
    expect(listed.body.lastSequence).toBe(2);
    // Resuming after 1 gives the account's second event, whatever came between for others.
    const resumed = await openStream(t.baseUrl, keyC, '/events/stream', { 'last-event-id': '1' });
    await resumed.until('the second event', () => resumed.messages.length >= 1);
    expect(eventBodies(resumed).map((e) => e.payload.id)).toEqual([second]);
    reader.close();
    resumed.close();
  });

  it('filters by event types and by company', async () => {
    const companyId = await createCompany(keyA, 'Filtered Ltd');
    const other = await createCompany(keyA, 'Unfiltered Ltd');
    const start = await head(keyA);
    const byType = await openStream(t.baseUrl, keyA, `/events/stream?after=${start}&types=company.deleted,connection.created`);
    const byCompany = await openStream(t.baseUrl, keyA, `/events/stream?after=${start}&companyId=${companyId}`);
    const both = await openStream(t.baseUrl, keyA, `/events/stream?after=${start}&types=company.deleted&companyId=${other}`);
    const connection = await t.call('POST', `/companies/${companyId}/connections`, { apiKey: keyA, body: { platformKey: 'gbol' } });
    expect(connection.status).toBe(200);
    expect((await t.call('DELETE', `/companies/${other}`, { apiKey: keyA })).status).toBe(204);
    expect((await t.call('DELETE', `/companies/${companyId}`, { apiKey: keyA })).status).toBe(204);

    await byType.until('three events', () => byType.messages.length >= 3);
    expect(byType.messages.map((m) => m.type)).toEqual(['connection.created', 'company.deleted', 'company.deleted']);
    await byCompany.until('two events', () => byCompany.messages.length >= 2);
    expect(byCompany.messages.map((m) => m.type)).toEqual(['connection.created', 'company.deleted']);
    expect(eventBodies(byCompany).every((e) => (e.payload.referenceCompany?.id ?? e.payload.id) === companyId)).toBe(true);
    await both.until('one event', () => both.messages.length >= 1);
    expect(eventBodies(both).map((e) => [e.eventType, e.payload.id])).toEqual([['company.deleted', other]]);
    // Nothing more came for the narrow filters: the wider one saw the last event after theirs.
    expect(both.messages).toHaveLength(1);
    for (const reader of [byType, byCompany, both]) reader.close();
  });

  it('refuses a bad filter or starting point before the stream starts', async () => {
    const mine = await createCompany(keyA, 'Mine');
    const theirs = await createCompany(keyB, 'Theirs');
    const unknownType = await openStream(t.baseUrl, keyA, '/events/stream?types=company.created,nope.never');
    expect(unknownType.status).toBe(400);
    const body = JSON.parse(unknownType.body);
    expect(body.validation.errors[0].itemId).toBe('types');
    expect(body.error).toContain('nope.never');
    expect(body.error).toContain('read.completed'); // lists the valid ones

    expect((await openStream(t.baseUrl, keyA, '/events/stream?types=')).status).toBe(400);
    expect((await openStream(t.baseUrl, keyA, `/events/stream?companyId=${theirs}`)).status).toBe(403);
    expect((await openStream(t.baseUrl, keyA, '/events/stream?companyId=no-such-company')).status).toBe(404);
    expect((await openStream(t.baseUrl, keyA, '/events/stream', { 'last-event-id': 'abc' })).status).toBe(400);
    expect((await openStream(t.baseUrl, keyA, '/events/stream?after=-5')).status).toBe(400);
    expect((await openStream(t.baseUrl, 'not-a-key', '/events/stream')).status).toBe(401);
    const ok = await openStream(t.baseUrl, keyA, `/events/stream?companyId=${mine}`);
    expect(ok.status).toBe(200);
    ok.close();
    expect((await t.call('POST', '/events/stream', { apiKey: keyA })).status).toBe(405);
    // HEAD answers the headers and ends; it does not hold a stream open.
    const headed = await t.call('HEAD', '/events/stream', { apiKey: keyA });
    expect(headed.status).toBe(200);
    expect(headed.headers.get('content-type')).toMatch(/^text\/event-stream/);
  });

  it('sends a comment as a heartbeat while nothing happens', async () => {
    const reader = await openStream(t.baseUrl, keyA, '/events/stream');
    await reader.until('two heartbeats', () => reader.text().split(': keep-alive\n\n').length >= 3);
    expect(reader.messages).toEqual([]);
    reader.close();
  });

  it('a reader that stalls is waited for: thousands of events arrive whole and in order once it reads', async () => {
    const start = await head(keyA);
    const reader = await openStream(t.baseUrl, keyA, `/events/stream?after=${start}`, {}, true);
    const events = eventsOf(t.service.context);
    const filler = 'x'.repeat(500);
    const count = 3000;
    await t.service.store.transaction(async () => {
      for (let i = 0; i < count; i += 1) await recordEvent(events, { clientId: clientA, eventType: 'ferry.webhook.test', payload: { id: 'test', message: 'filler', n: i, filler } });
    });
    // The service is not blocked by the stalled reader.
    expect((await t.call('GET', '/events/types', { apiKey: keyA })).status).toBe(200);
    reader.resume();
    await reader.until(`${count} events`, () => reader.messages.length >= count, 20_000);
    expect(eventBodies(reader).map((e) => e.payload.n)).toEqual(Array.from({ length: count }, (_, i) => i));
    const sequences = reader.messages.map((m) => Number(m.lastEventId));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    reader.close();
  });

  it('a closed client leaves no listener behind', async () => {
    // The bus's listeners are private: looked at here only to prove the stream let go of its own.
    const listeners = (t.service.context.events as unknown as { listeners: { events: Set<unknown> } }).listeners.events;
    const before = new Set(listeners);
    const reader = await openStream(t.baseUrl, keyA, '/events/stream');
    await reader.until('the start', () => reader.text().length > 0);
    const mine = [...listeners].filter((l) => !before.has(l));
    expect(mine).toHaveLength(1);
    reader.close();
    const deadline = Date.now() + 5000;
    while (listeners.has(mine[0]) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(listeners.has(mine[0])).toBe(false);
  });
});

describe('event stream and the service', () => {
  it('counts a stream once against the key\'s rate limit, however long it runs', async () => {
    const clock = new FakeClock(); // frozen: the bucket never refills during the test
    const t = await startTestStack('service', { rateLimit: 5, clock, eventHeartbeatMs: 20 });
    try {
      const { id, apiKey } = await t.createClient('Limited', 'Paid');
      const reader = await openStream(t.baseUrl, apiKey, '/events/stream');
      expect(reader.headers['x-rate-limit-remaining']).toBe('4');
      const events = eventsOf(t.service.context);
      for (let i = 0; i < 3; i += 1) await recordEvent(events, { clientId: id, eventType: 'ferry.webhook.test', payload: { id: 'test', message: 'numbered', n: i } });
      await reader.until('three events and heartbeats', () => reader.messages.length >= 3 && reader.text().split(': keep-alive').length >= 4);
      const next = await t.call('GET', '/events/types', { apiKey });
      expect(next.headers.get('x-rate-limit-remaining')).toBe('3');
      reader.close();
    } finally {
      await t.stop();
    }
  });

  it('close() ends open streams instead of waiting for them', async () => {
    const t = await startTestStack('service');
    const { apiKey } = await t.createClient('Closing', 'Paid');
    const readers = await Promise.all([1, 2, 3].map(() => openStream(t.baseUrl, apiKey, '/events/stream')));
    await Promise.all(readers.map((r) => r.until('the start', () => r.text().length > 0)));
    const started = Date.now();
    await t.stop();
    expect(Date.now() - started).toBeLessThan(5000);
    await Promise.all(readers.map((r) => r.until('the end', () => r.ended)));
  });
});
