// /webhooks: consumers (create, list, get, delete, every 400), the secret shown once and
// sealed at rest, and the delivery log (list, detail, replay, test) over a live delivery loop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/service/events/catalogue.js';
import { atRest } from '../helpers/at-rest.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { countsById, startReceiver, type Receiver } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

let t: TestService;
let key: string;
let otherKey: string;
let receiver: Receiver;

const call = (method: string, path: string, body?: unknown, apiKey = key) => t.call(method, path, { apiKey, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  // The receiver listens on 127.0.0.1: the operator's opt-in.
  t = await startTestStack('service', { webhookTargets: { allowPrivate: true } });
  key = (await t.createClient('Hooks Ltd', 'Paid')).apiKey;
  otherKey = (await t.createClient('Other Ltd', 'Paid')).apiKey;
  receiver = await startReceiver();
});

afterAll(async () => {
  await t.stop();
  await receiver.close();
});

describe('consumers', () => {
  it('creates one, shows its secret once, and keeps the secret sealed at rest', async () => {
    const created = await call('POST', '/webhooks', { url: 'https://example.com/hooks', eventTypes: ['company.created', 'read.completed'], companyTags: ['region:eu'] });
    expect(created.status, created.text).toBe(201);
    const { secret, ...consumer } = created.body;
    expect(consumer).toEqual({
      id: expect.stringMatching(UUID), url: 'https://example.com/hooks', eventTypes: ['company.created', 'read.completed'], companyTags: ['region:eu'],
      disabled: false, created: expect.stringMatching(ISO_Z),
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);

    const got = await call('GET', `/webhooks/${consumer.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(consumer);
    const list = await call('GET', '/webhooks');
    expect(list.body.results).toContainEqual(consumer);
    expect(list.text).not.toContain(secret);

    const row = (await atRest(t).get<{ secret: Buffer }>('SELECT secret FROM webhook_consumers WHERE id = ?', consumer.id))!;
    expect(row.secret.includes(Buffer.from(secret))).toBe(false);
    expect(row.secret.includes(Buffer.from(secret.slice(6), 'base64'))).toBe(false);
    expect(t.service.context.sealer.open<string>(row.secret, consumer.id)).toBe(secret);
    // Bound to its consumer: the blob does not open as another's.
    expect(() => t.service.context.sealer.open(row.secret, 'another-id')).toThrow();
  });

  it('takes a disabled consumer and no company filter', async () => {
    const created = await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/x', eventTypes: ['company.created'], disabled: true });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ disabled: true });
    expect(created.body).not.toHaveProperty('companyTags');
  });

  it('answers 404 for an unknown consumer and for another account\'s, and deletes', async () => {
    const created = await call('POST', '/webhooks', { url: 'https://example.com/a', eventTypes: ['company.deleted'] });
    const id = created.body.id;
    for (const [method, path] of [['GET', `/webhooks/${id}`], ['DELETE', `/webhooks/${id}`], ['GET', `/webhooks/${id}/deliveries`], ['POST', `/webhooks/${id}/test`]] as const) {
      const other = await call(method, path, undefined, otherKey);
      expect(other.status, `${method} ${path}`).toBe(404);
    }
    expect((await call('GET', '/webhooks', undefined, otherKey)).body.results).toEqual([]);
    expect((await call('GET', '/webhooks/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(204);
    expect((await call('GET', `/webhooks/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(404);
  });

  const valid = { url: 'https://example.com/hooks', eventTypes: ['company.created'] };
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['no url', { eventTypes: ['company.created'] }, 'url', /url is required/],
    ['an ftp url', { ...valid, url: 'ftp://example.com/x' }, 'url', /url must be an http or https URL/],
    ['a relative url', { ...valid, url: '/hooks' }, 'url', /url must be an absolute http\(s\) URL/],
    ['credentials in the url', { ...valid, url: 'https://user:pass@example.com/x' }, 'url', /url must not carry credentials/],
    ['a user alone in the url', { ...valid, url: 'https://user@example.com/x' }, 'url', /url must not carry credentials/],
    ['a url over 2,048 characters', { ...valid, url: `https://example.com/${'a'.repeat(2030)}` }, 'url', /url must be at most 2048 characters/],
    ['no eventTypes', { url: valid.url }, 'eventTypes', /eventTypes is required/],
    ['empty eventTypes', { ...valid, eventTypes: [] }, 'eventTypes', /eventTypes is required/],
    ['eventTypes not strings', { ...valid, eventTypes: [1] }, 'eventTypes', /eventTypes is required/],
    ['an unknown event type', { ...valid, eventTypes: ['company.created', 'DataSyncCompleted'] }, 'eventTypes', /Unknown event type: DataSyncCompleted\. Valid event types: company\.created, /],
    ['11 company tags', { ...valid, companyTags: Array.from({ length: 11 }, (_, i) => `k:${i}`) }, 'companyTags', /at most 10 tags/],
    ['a company tag over 128 characters', { ...valid, companyTags: [`k:${'v'.repeat(127)}`] }, 'companyTags', /at most 128 characters/],
    ['a company tag without a key', { ...valid, companyTags: ['region'] }, 'companyTags', /key:value/],
    ['companyTags not a list', { ...valid, companyTags: 'region:eu' }, 'companyTags', /list of key:value/],
    ['disabled not a boolean', { ...valid, disabled: 'yes' }, 'disabled', /disabled must be true or false/],
  ];
  it.each(cases)('refuses %s with a 400 naming the field', async (_name, body, field, message) => {
    const result = await call('POST', '/webhooks', body);
    expect(result.status, result.text).toBe(400);
    expect(result.body.error).toMatch(message);
    expect(result.body.validation.errors).toEqual([expect.objectContaining({ itemId: field, message: expect.stringMatching(message) })]);
  });

  it('lists every valid event type when one is unknown', async () => {
    const result = await call('POST', '/webhooks', { ...valid, eventTypes: ['nope.never'] });
    expect(result.status).toBe(400);
    for (const type of EVENT_TYPES) expect(result.body.error).toContain(type);
  });

  it('accepts exactly 2,048 characters and 10 tags of 128', async () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    const companyTags = Array.from({ length: 10 }, (_, i) => `k${i}:${'v'.repeat(128 - 3)}`);
    const result = await call('POST', '/webhooks', { url, eventTypes: ['company.created'], companyTags });
    expect(result.status, result.text).toBe(201);
    expect(result.body.url).toHaveLength(2048);
    await call('DELETE', `/webhooks/${result.body.id}`);
  });

  it('refuses a 51st consumer', async () => {
    const { apiKey } = await t.createClient('Many Ltd', 'Paid');
    for (let i = 0; i < 50; i++) {
      const created = await call('POST', '/webhooks', { url: `https://example.com/${i}`, eventTypes: ['company.created'] }, apiKey);
      expect(created.status).toBe(201);
    }
    const refused = await call('POST', '/webhooks', { url: 'https://example.com/51', eventTypes: ['company.created'] }, apiKey);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/at most 50 webhook consumers/);
  });
});

describe('the delivery log', () => {
  let consumerId: string;

  beforeAll(async () => {
    const created = await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['company.created'] });
    consumerId = created.body.id;
    receiver.secret = created.body.secret;
  });

  it('delivers signed events, and lists them with their attempts', async () => {
    const companies: string[] = [];
    for (let i = 0; i < 3; i++) companies.push((await call('POST', '/companies', { name: `Logged ${i}` })).body.id as string);
    await waitFor('three deliveries', async () => receiver.received.length >= 3);
    // Each outcome is recorded once its receiver has answered.
    await waitFor('three deliveries recorded', async () => (await call('GET', `/webhooks/${consumerId}/deliveries?status=Delivered`)).body.totalResults === 3);
    expect(receiver.received.map((r) => r.verified)).toEqual([true, true, true]);
    expect(receiver.received.map((r) => r.event.payload.id).sort()).toEqual([...companies].sort());

    const page = await call('GET', `/webhooks/${consumerId}/deliveries?pageSize=2`);
    expect(page.status, page.text).toBe(200);
    expect(page.body).toMatchObject({ pageNumber: 1, pageSize: 2, totalResults: 3, _links: { next: { href: `/webhooks/${consumerId}/deliveries?page=2&pageSize=2` } } });
    const [newest] = page.body.results;
    expect(newest).toEqual({
      id: expect.stringMatching(UUID), eventId: receiver.received.find((r) => r.event.payload.id === companies[2])!.id, eventType: 'company.created',
      status: 'Delivered', attempts: 1, created: expect.stringMatching(ISO_Z), completed: expect.stringMatching(ISO_Z),
      lastAttempt: { at: expect.stringMatching(ISO_Z), statusCode: 204, latencyMs: expect.any(Number) },
    });

    const detail = await call('GET', `/webhooks/${consumerId}/deliveries/${newest.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({ ...newest, attemptLog: [newest.lastAttempt] });
    expect((await call('GET', `/webhooks/${consumerId}/deliveries/${newest.id}`, undefined, otherKey)).status).toBe(404);
    expect((await call('GET', `/webhooks/${consumerId}/deliveries/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('filters by status, and keeps the filter in its links', async () => {
    const delivered = await call('GET', `/webhooks/${consumerId}/deliveries?status=Delivered&pageSize=1`);
    expect(delivered.status, delivered.text).toBe(200);
    expect(delivered.body.totalResults).toBe(3);
    expect(delivered.body._links.next.href).toBe(`/webhooks/${consumerId}/deliveries?page=2&pageSize=1&query=status%3DDelivered`);
    const next = await call('GET', delivered.body._links.next.href);
    expect(next.body.results[0].status).toBe('Delivered');
    expect((await call('GET', `/webhooks/${consumerId}/deliveries?status=Failed`)).body.totalResults).toBe(0);
    expect((await call('GET', `/webhooks/${consumerId}/deliveries?query=eventType%3Dcompany.created`)).body.totalResults).toBe(3);
    const bad = await call('GET', `/webhooks/${consumerId}/deliveries?status=Lost`);
    expect(bad.status).toBe(400);
    expect(bad.body.validation.errors[0].itemId).toBe('status');
  });

  it('replays a delivery under the same webhook-id', async () => {
    const [first] = (await call('GET', `/webhooks/${consumerId}/deliveries`)).body.results;
    const before = receiver.received.length;
    const replay = await call('POST', `/webhooks/${consumerId}/deliveries/${first.id}/replay`);
    expect(replay.status, replay.text).toBe(202);
    expect(replay.body).toMatchObject({ eventId: first.eventId, eventType: 'company.created', status: 'Pending', attempts: 0 });
    expect(replay.body.id).not.toBe(first.id);
    await waitFor('the replay', async () => receiver.received.length > before);
    const again = receiver.received.at(-1)!;
    expect(again.id).toBe(first.eventId);
    expect(again.verified).toBe(true);
    expect(countsById(receiver.received).get(first.eventId)).toBe(2);
    await waitFor('the replay recorded', async () => (await call('GET', `/webhooks/${consumerId}/deliveries/${replay.body.id}`)).body.status === 'Delivered');
  });

  it('sends a test event to that consumer alone', async () => {
    const other = await startReceiver();
    try {
      const bystander = await call('POST', '/webhooks', { url: other.url, eventTypes: ['ferry.webhook.test'] });
      const mine = await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['ferry.webhook.test'] });
      receiver.secret = mine.body.secret;
      const before = receiver.received.length;
      const sent = await call('POST', `/webhooks/${mine.body.id}/test`);
      expect(sent.status, sent.text).toBe(202);
      expect(sent.body).toMatchObject({ eventType: 'ferry.webhook.test', status: 'Pending' });
      await waitFor('the test event', async () => receiver.received.length > before);
      const got = receiver.received.at(-1)!;
      expect(got.verified).toBe(true);
      expect(got.event).toMatchObject({ id: sent.body.eventId, eventType: 'ferry.webhook.test', payload: { id: mine.body.id, message: expect.any(String) } });
      expect(other.requests).toBe(0);
      expect((await call('GET', `/webhooks/${bystander.body.id}/deliveries`)).body.totalResults).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('refuses a test for a disabled consumer', async () => {
    const off = await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['company.created'], disabled: true });
    const test = await call('POST', `/webhooks/${off.body.id}/test`);
    expect(test.status).toBe(409);
    expect(test.body.error).toMatch(/is disabled/);
  });
});
