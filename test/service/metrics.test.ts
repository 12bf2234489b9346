// The service's Prometheus metrics, read from its exposition as a scraper would: requests
// by route template, method and status (never a path or an id), the ones in flight and the
// open event streams, the 429s by reason, the response cache, the store's operations, and
// the process's own metrics. No label anywhere holds an id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack, testStore, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { parseExposition, total, UUID, type Sample } from '../helpers/observability.js';

describe('the service\'s metrics', () => {
  let t: TestService;
  const read = async (): Promise<Sample[]> => parseExposition((await t.service.exposition!()).text);

  beforeAll(async () => {
    t = await startTestStack('service', { metrics: true, rateLimit: 5, streamLimits: { perKey: 1 } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('counts requests by route template, method and status, with their latency', async () => {
    const { id: clientId, apiKey } = await t.createClient('Metered Ltd', 'Paid');
    const created = await t.call('POST', '/companies', { apiKey, body: { name: 'Counted' } });
    expect(created.status).toBe(200);
    expect((await t.call('GET', `/companies/${created.body.id}`, { apiKey })).status).toBe(200);
    expect((await t.call('GET', `/companies/${clientId}`, { apiKey })).status).toBe(404);
    expect((await t.call('GET', '/no/such/route', { apiKey })).status).toBe(404);
    expect((await t.call('GET', '/companies', { apiKey: 'fy_not-a-key' })).status).toBe(401);

    const samples = await read();
    const requests = (route: string, method: string, status: string) => total(samples, 'ferry_http_requests_total', { route, method, status });
    expect(requests('/companies', 'POST', '200')).toBe(1);
    expect(requests('/companies/:companyId', 'GET', '200')).toBe(1);
    expect(requests('/companies/:companyId', 'GET', '404')).toBe(1);
    expect(requests('unmatched', 'GET', '404')).toBe(1);
    expect(requests('/companies', 'GET', '401')).toBe(1);
    expect(total(samples, 'ferry_http_request_duration_seconds_count', { route: '/companies/:companyId', method: 'GET' })).toBe(2);
    // The scrape itself is no request of the API's.
    expect(total(samples, 'ferry_http_requests_in_flight')).toBe(0);
  });

  it('counts 429s by reason: the key\'s rate limit, and its event streams', async () => {
    const { apiKey } = await t.createClient('Refused Ltd', 'Paid');
    const before = await read();
    let limited = 0;
    for (let i = 0; i < 12; i++) if ((await t.call('GET', '/profile', { apiKey })).status === 429) limited += 1;
    expect(limited).toBeGreaterThan(0);
    const { apiKey: streamKey } = await t.createClient('Streaming Ltd', 'Paid');
    const open = await openStream(t.baseUrl, streamKey, '/events/stream');
    try {
      expect(open.status).toBe(200);
      const during = await read();
      expect(total(during, 'ferry_event_streams_open')).toBe(1);
      expect(total(during, 'ferry_http_requests_in_flight')).toBe(1);
      const refused = await openStream(t.baseUrl, streamKey, '/events/stream');
      refused.close();
      expect(refused.status).toBe(429);
    } finally {
      open.close();
    }
    await waitFor('the stream to end', async () => total(await read(), 'ferry_event_streams_open') === 0);
    const after = await read();
    const refusals = (reason: string) => total(after, 'ferry_http_too_many_requests_total', { reason }) - total(before, 'ferry_http_too_many_requests_total', { reason });
    expect(refusals('rate_limit')).toBe(limited);
    expect(refusals('stream_cap')).toBe(1);
    expect(total(after, 'ferry_http_requests_total', { status: '429' }) - total(before, 'ferry_http_requests_total', { status: '429' })).toBe(limited + 1);
  });

  it('counts the response cache\'s hits and misses and its bytes, and times the store\'s operations', async () => {
    const { apiKey } = await t.createClient('Cached Ltd', 'Paid');
    await t.call('POST', '/companies', { apiKey, body: { name: 'Cached' } });
    const before = await read();
    for (let i = 0; i < 3; i++) expect((await t.call('GET', '/companies?pageSize=7', { apiKey })).status).toBe(200);
    const after = await read();
    const misses = total(after, 'ferry_response_cache_misses_total') - total(before, 'ferry_response_cache_misses_total');
    const hits = total(after, 'ferry_response_cache_hits_total') - total(before, 'ferry_response_cache_hits_total');
    expect(hits + misses).toBe(3);
    // On PostgreSQL the data version is the server's snapshot: other databases' commits move it too, and a page is built again.
    if (testStore === 'sqlite') expect(misses).toBe(1);
    else expect(misses).toBeGreaterThanOrEqual(1);
    expect(total(after, 'ferry_response_cache_bytes')).toBeGreaterThan(0);
    expect(total(after, 'ferry_read_pool_queue_depth')).toBe(0);
    expect(total(after, 'ferry_store_operation_duration_seconds_count', { operation: 'dataVersion' })).toBeGreaterThan(0);
    expect(total(after, 'ferry_store_operation_duration_seconds_count', { operation: 'transaction' })).toBeGreaterThan(0);
    expect(total(after, 'ferry_database_unreachable')).toBe(0);
  });

  it('has the process\'s own metrics, and no label with an id, a path or a key in it', async () => {
    const samples = await read();
    expect(total(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    const values = samples.flatMap((s) => Object.values(s.labels));
    expect(values.filter((v) => UUID.test(v) || v.includes('fy_') || v.includes('?'))).toEqual([]);
    const routes = new Set(samples.filter((s) => s.name === 'ferry_http_requests_total').map((s) => s.labels.route!));
    for (const route of routes) expect(route === 'unmatched' || route.startsWith('/')).toBe(true);
  });
});

describe('a service without metrics', () => {
  it('keeps none', async () => {
    const t = await startTestStack('service');
    try {
      expect(t.service.exposition).toBeUndefined();
    } finally {
      await t.stop();
    }
  });
});
