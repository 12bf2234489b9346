// Event types with the real CLI against a `ferry serve`: `ferry webhooks events` lists them
// (plain and --json); a mistyped one given to `webhooks create` or `listen` is one error
// with one "did you mean" and a pointer to that command, not the whole list (twice). Behind
// a proxy offering only the public API (no catalogue) the service's 400 decides, and its
// validation item, the same text as its message, is printed once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { stopCleanly } from '../migrate/support.js';

let stack: ServeHandle;
let proxy: PublicApiProxy;

beforeAll(async () => {
  stack = await startTestStack('serve');
  proxy = await startPublicApiProxy(stack.baseUrl);
});

afterAll(async () => {
  await proxy?.close();
  await stopCleanly(stack);
});

describe('event types', () => {
  it('ferry webhooks events lists them, one a line or as JSON', async () => {
    const plain = await runFerry([...stack.target(), 'webhooks', 'events']);
    expect(plain.code, plain.stderr).toBe(0);
    const types = plain.stdout.trim().split('\n');
    expect(types).toContain('read.completed');
    expect(types).toContain('invoices.write.successful');
    const json = await runFerry([...stack.target(), '--json', 'webhooks', 'events']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(types);
  });

  it('a mistyped type is one did-you-mean and a pointer, for webhooks create and listen', async () => {
    const create = await runFerry([...stack.target(), 'webhooks', 'create', '--url', 'https://example.com/hooks', '--events', 'read.complete']);
    expect(create.code, create.stderr).toBe(2);
    expect(create.stderr).toBe('error: Unknown event type: read.complete.\nhint: Did you mean read.completed? ferry webhooks events lists every event type.\n');
    const listen = await runFerry([...stack.target(), 'listen', '--events', 'invoice.write.success']);
    expect(listen.code, listen.stderr).toBe(2);
    expect(listen.stderr).toContain('Did you mean invoices.write.successful? ferry webhooks events lists every event type.');
    expect(listen.stderr).not.toContain('read.completed');
  });

  it('without the catalogue the service decides; its one problem is said once', async () => {
    const run = await runFerry([...stack.target(stack.adminKeyFile, proxy.url), 'webhooks', 'create', '--url', 'https://example.com/hooks', '--events', 'read.complete']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.match(/Unknown event type: read\.complete/g) ?? []).toHaveLength(1);
    const events = await runFerry([...stack.target(stack.adminKeyFile, proxy.url), 'webhooks', 'events']);
    expect(events.code, events.stderr).toBe(1);
    expect(events.stderr).toContain('docs/events.md');
  });
});
