// The feed behind waits driven by events (src/client/wait-for-change.ts), on a real service
// in-process: an event committed just after the feed opened is delivered; one that came
// between two waits ends the next wait at once; irrelevant ones end nothing; a target
// without the stream leaves waits to their timers; one refused for the key's open streams
// polls meanwhile and gets in once a slot is free. And pollUntil with a feed: rounds at
// events, and its full rounds still on schedule however busy the stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/client.js';
import { pollUntil } from '../../src/client/poll.js';
import { openChangeFeed } from '../../src/client/wait-for-change.js';
import type { ChangeEvent, ChangeFeed } from '../../src/client/change-feed.js';
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';

let t: TestService;
let key: string;
let client: ApiClient;
const controller = new AbortController();
const { signal } = controller;
const opened: ChangeFeed[] = [];

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Feed Ltd', 'Paid')).apiKey;
  client = new ApiClient({ baseUrl: t.baseUrl, apiKey: key });
});

afterAll(async () => {
  for (const feed of opened) feed.close();
  controller.abort();
  await client?.close();
  await t?.stop();
});

async function feed(types: string[], target = client): Promise<ChangeFeed> {
  const made = await openChangeFeed(target, { types, signal });
  opened.push(made);
  return made;
}

async function createCompany(name: string): Promise<string> {
  const created = await t.call('POST', '/companies', { apiKey: key, body: { name } });
  expect(created.status).toBe(200);
  return created.body.id;
}

const companyOf = (event: ChangeEvent) => event.payload.id;

describe('the change feed', () => {
  it('delivers an event committed right after it opened, ending a long wait at once', async () => {
    const changes = await feed(['company.created']);
    const since = changes.mark();
    const id = await createCompany('Right After');
    const started = Date.now();
    const woke = await changes.next(since, (e) => companyOf(e) === id, 30_000, signal);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(woke.events?.map((e) => [e.eventType, companyOf(e)])).toEqual([['company.created', id]]);
    expect(woke.mark).toBe(changes.mark());
    expect(changes.state).toBe('live');
  });

  it('an event that came between two waits ends the next wait at once; a wait from after it times out', async () => {
    const changes = await feed(['company.created']);
    const since = changes.mark();
    const id = await createCompany('Between Waits');
    await waitFor('the event to arrive', async () => changes.mark() > since);
    const woke = await changes.next(since, (e) => companyOf(e) === id, 30_000, signal);
    expect(woke.events?.map(companyOf)).toEqual([id]);
    const quiet = await changes.next(woke.mark, () => true, 50, signal);
    expect(quiet).toEqual({ events: [], mark: woke.mark });
  });

  it('irrelevant events do not end a wait', async () => {
    const changes = await feed(['company.created']);
    const waiting = changes.next(changes.mark(), () => false, 300, signal);
    const since = changes.mark();
    await createCompany('Irrelevant');
    await waitFor('the event to arrive', async () => changes.mark() > since);
    expect((await waiting).events).toEqual([]);
  });

  it('a feed refused for the key\'s open streams (429) polls meanwhile, and delivers once a slot is free', async () => {
    const { apiKey } = await t.createClient('Busy Streams Ltd', 'Paid');
    const holders = await Promise.all(Array.from({ length: 10 }, () => openStream(t.baseUrl, apiKey, '/events/stream')));
    expect(holders.map((h) => h.status)).toEqual(Array(10).fill(200));
    const busy = new ApiClient({ baseUrl: t.baseUrl, apiKey });
    const lines: string[] = [];
    const changes = await openChangeFeed(busy, { types: ['company.created'], signal, log: (line) => lines.push(line) });
    try {
      await waitFor('the refusal', async () => lines.some((line) => line.includes('reconnecting')));
      expect(changes.state).toBe('connecting');
      // Committed while the feed is refused: delivered once it gets in, since it started before.
      const since = changes.mark();
      const created = await t.call('POST', '/companies', { apiKey, body: { name: 'While Refused' } });
      holders.shift()!.close();
      const woke = await changes.next(since, (e) => companyOf(e) === created.body.id, 30_000, signal);
      expect(woke.events?.map(companyOf)).toEqual([created.body.id]);
      expect(changes.state).toBe('live');
    } finally {
      changes.close(); // before its client: a client closes once its streams have
      for (const holder of holders) holder.close();
      await busy.close();
    }
  });

  it('a target without the stream: unavailable, and waits end on their timers', async () => {
    const proxy: PublicApiProxy = await startPublicApiProxy(t.baseUrl);
    const behind = new ApiClient({ baseUrl: proxy.url, apiKey: key });
    try {
      const changes = await feed(['company.created'], behind);
      await waitFor('the feed to give up', async () => changes.state === 'unavailable');
      await createCompany('Unseen');
      expect(await changes.next(0, () => true, 50, signal)).toEqual({ events: [], mark: 0 });
      expect(proxy.requests.map((r) => r.path.split('?')[0])).toContain('/events/stream');
      changes.close();
    } finally {
      await behind.close();
      await proxy.close();
    }
  });
});

/** A feed whose every wait ends after `everyMs` with one relevant event: a stream that never goes quiet. */
function busyFeed(everyMs: number): ChangeFeed {
  let count = 0;
  return {
    state: 'live',
    mark: () => count,
    next: (_since, _relevant, _ms, waitSignal) => new Promise((resolve) => {
      const quit = () => {
        clearTimeout(timer);
        resolve({ events: [], mark: count });
      };
      const timer = setTimeout(() => {
        waitSignal.removeEventListener('abort', quit);
        count += 1;
        resolve({ events: [{ id: String(count), eventType: 'read.completed', generatedDate: '', payload: {} }], mark: count });
      }, everyMs);
      waitSignal.addEventListener('abort', quit, { once: true });
    }),
    close: () => {},
  };
}

describe('pollUntil with a feed', () => {
  it('rounds at events, and full rounds on schedule however busy the stream', async () => {
    let woken = 0;
    let full = 0;
    await pollUntil({
      signal, deadline: Date.now() + 600, firstDelayMs: 40, done: () => false,
      wake: { feed: busyFeed(5), relevant: () => true },
      round: async (changed) => {
        if (changed) woken += 1;
        else full += 1;
      },
    });
    // 40, 60, 90, 135, 202 ms apart (±10%): five full rounds fit in 600 ms, four at the least.
    expect(full).toBeGreaterThanOrEqual(3);
    expect(woken).toBeGreaterThan(full);
  });

  it('stops when done, without waiting out the pause', async () => {
    let rounds = 0;
    const started = Date.now();
    await pollUntil({
      signal, deadline: Date.now() + 30_000, firstDelayMs: 20_000, done: () => rounds > 0,
      wake: { feed: busyFeed(5), relevant: () => true },
      round: async () => {
        rounds += 1;
      },
    });
    expect(rounds).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
