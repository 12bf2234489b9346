// `ferry webhooks create|list|delete|deliveries|replay|test` against a real `ferry serve`
// (both in this process), delivering to a real receiver on 127.0.0.1: the secret shown once,
// the checks made before any request, the service's 400s, the delivery log, a replay under
// the same webhook-id, a test event waited for (Delivered, retried, Failed on a 410), and
// the delete confirmation. The service delivers to the receiver's port on 127.0.0.1 only
// because it was started with --webhook-allow; other private targets are its 400s, and the
// embedded service (no --base-url) allows none.
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/service.js';
import { ferry as ferryInProcess } from '../helpers/in-process.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { createClient, waitFor } from '../helpers/sync.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver: records every request; a path's queue of answers says what it answers (200 when it runs out). */
class Receiver {
  readonly received: Received[] = [];
  readonly answers = new Map<string, number[]>();
  private server!: Server;
  url = '';
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = this.answers.get(path)?.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : 'no');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    this.url = `http://127.0.0.1:${this.port}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let serve: ServeHandle;
let receiver: Receiver;
let target: string[];
let key: string;

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.start();
  serve = await startTestStack('serve', { args: ['--webhook-allow', `127.0.0.1:${receiver.port}`] });
  key = await createClient(serve.api, serve.adminKey, 'Webhooks Ltd', 'Paid');
  target = serve.target(serve.keyFile('client.key', key));
});

afterAll(async () => {
  await receiver?.stop();
  await serve?.stop();
});

const ferry = (...args: string[]) => ferryInProcess([...target, ...args]);

/** Creates a consumer with --json and returns it (with its secret). */
async function consumer(path: string, events = 'company.created'): Promise<{ id: string; secret: string; url: string }> {
  const run = await ferry('--json', 'webhooks', 'create', '--url', `${receiver.url}${path}`, '--events', events);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

describe('ferry webhooks create', () => {
  it('piped: the id alone on stdout, and a note that the secret was not printed', async () => {
    const run = await ferry('webhooks', 'create', '--url', `${receiver.url}/piped`, '--events', 'read.completed,connection.disconnected', '--company-tag', 'region:eu');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${UUID}\\n$`));
    expect(run.stdout + run.stderr).not.toContain('whsec_');
    expect(run.stderr).toContain('shown only at creation');
    const listed = await serve.api.call('GET', `/webhooks/${run.stdout.trim()}`, { apiKey: key });
    expect(listed.body).toMatchObject({ url: `${receiver.url}/piped`, eventTypes: ['read.completed', 'connection.disconnected'], companyTags: ['region:eu'], disabled: false });
  });

  it('--json: the record with its secret; --disabled creates it disabled', async () => {
    const run = await ferry('--json', 'webhooks', 'create', '--url', `${receiver.url}/json`, '--events', 'company.created', '--events', 'company.deleted', '--disabled');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const created = JSON.parse(run.stdout);
    expect(created).toMatchObject({ id: expect.stringMatching(new RegExp(`^${UUID}$`)), eventTypes: ['company.created', 'company.deleted'], disabled: true });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
  });

  it('on a terminal: the secret once, with a note that it is shown only now', async () => {
    const run = await ferryInProcess([...target, 'webhooks', 'create', '--url', `${receiver.url}/tty`, '--events', 'company.created'], { tty: true });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^id +${UUID}$`, 'm'));
    expect(run.stdout).toMatch(/^secret +whsec_\S+$/m);
    expect(run.stderr).toContain('The signing secret is shown only now');
    expect(run.stderr).toContain(`Next: ferry ${target.join(' ')} webhooks test `);
    // Never again: not in the list, not in the consumer.
    const list = await ferry('--json', 'webhooks', 'list');
    expect(list.stdout).not.toContain('whsec_');
  });

  it.each([
    ['an ftp URL', ['--url', 'ftp://example.com/hooks', '--events', 'company.created'], '--url must be http or https'],
    ['no URL at all', ['--url', 'not a url', '--events', 'company.created'], '--url is not an absolute URL'],
    ['a URL over 2,048 characters', ['--url', `https://${'a'.repeat(2050)}.example.com/`, '--events', 'company.created'], 'at most 2048'],
    ['an event name with a space', ['--url', 'https://example.com/hooks', '--events', 'company created'], '--events "company created" is not an event type'],
    ['no event name', ['--url', 'https://example.com/hooks', '--events', ' , '], '--events names no event type'],
    ['a tag without a colon', ['--url', 'https://example.com/hooks', '--events', 'company.created', '--company-tag', 'region=eu'], '--company-tag "region=eu" is not key:value'],
  ])('%s is a usage error before any request (exit 2)', async (_what, args, message) => {
    const run = await ferryInProcess(['--base-url', 'http://127.0.0.1:9', '--api-key-file', target[3]!, 'webhooks', 'create', ...args]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain('Could not reach'); // refused before any request
  });

  it('a URL with credentials is refused without echoing them', async () => {
    const run = await ferry('webhooks', 'create', '--url', 'https://bob:hunter2@example.com/hooks', '--events', 'company.created');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--url must not carry credentials');
    expect(run.stderr).not.toContain('hunter2');
  });

  it('an unknown event type is refused from the catalogue (exit 2); too many tags are the service\'s 400 with its validation items', async () => {
    const unknown = await ferry('webhooks', 'create', '--url', `${receiver.url}/x`, '--events', 'company.exploded');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown event type: company.exploded.');
    expect(unknown.stderr).toContain('ferry webhooks events lists every event type.');
    expect(unknown.stderr).not.toContain('read.completed');
    const tags = Array.from({ length: 11 }, (_, i) => ['--company-tag', `k${i}:v`]).flat();
    const many = await ferry('--json', 'webhooks', 'create', '--url', `${receiver.url}/x`, '--events', 'company.created', ...tags);
    expect(many.code).toBe(1);
    expect(JSON.parse(many.stderr).error).toMatchObject({ status: 400, exitCode: 1, validation: [expect.objectContaining({ itemId: 'companyTags' })] });
  });

  it('a private URL is the service\'s 400 (exit 1): the reason, and what to do instead', async () => {
    for (const [url, reason] of [['http://127.0.0.1:9/hooks', '127.0.0.1 is a loopback address'], [`http://localhost:${receiver.port}/hooks`, 'localhost is this machine'], ['http://169.254.169.254/latest', '169.254.169.254 is a link-local address']]) {
      const run = await ferry('webhooks', 'create', '--url', url!, '--events', 'company.created');
      expect(run.code, url).toBe(1);
      expect(run.stderr).toMatch(/HTTP 400 from POST \/webhooks/);
      // Said once: the item repeats the message, so it is not listed under it again.
      expect(run.stderr).toContain(`error: The webhook consumer is not valid: url must reach a public address: ${reason}`);
      expect(run.stderr).not.toContain('- url:');
      expect(run.stderr).toContain('`ferry listen --forward-to URL`');
    }
  });

  it('the embedded service (no --base-url) refuses a private URL too', async () => {
    const dataDir = tempDir('ferry-embedded-');
    try {
      const run = await ferryInProcess(['--data-dir', dataDir, 'webhooks', 'create', '--url', receiver.url, '--events', 'company.created']);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain('not valid: url must reach a public address: 127.0.0.1 is a loopback address');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a refused key is exit 4', async () => {
    const run = await ferryInProcess([...serve.target(serve.keyFile('bad.key', 'not-a-key')), 'webhooks', 'list']);
    expect(run.code).toBe(4);
  });
});

describe('ferry webhooks list', () => {
  it('piped: one tab-separated line per consumer; --json: an array; terminal: a table', async () => {
    const { id } = await consumer('/listed', 'company.created,company.deleted');
    const piped = await ferry('webhooks', 'list');
    expect(piped.code, piped.stderr).toBe(0);
    const line = piped.stdout.split('\n').find((l) => l.startsWith(id))!;
    expect(line.split('\t')).toEqual([id, `${receiver.url}/listed`, 'company.created,company.deleted', '', 'enabled', expect.stringMatching(/^\d{4}-/)]);
    const json = await ferry('--json', 'webhooks', 'list');
    const all = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(all.find((c) => c.id === id)).toMatchObject({ url: `${receiver.url}/listed`, disabled: false });
    expect(all.every((c) => !('secret' in c))).toBe(true);
    const tty = await ferryInProcess([...target, '--no-color', 'webhooks', 'list'], { tty: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^ID +URL +EVENTS +COMPANYTAGS +STATE +CREATED$/);
  });
});

describe('ferry webhooks test, deliveries and replay', () => {
  it('test --wait: Delivered, signed so that a Standard Webhooks verifier accepts it', async () => {
    const made = await consumer('/ok');
    const run = await ferry('webhooks', 'test', made.id, '--wait');
    expect(run.code, run.stderr).toBe(0);
    const fields = Object.fromEntries(run.stdout.trim().split('\n').filter((l) => !l.startsWith('attempt\t')).map((l) => l.split('\t')));
    expect(fields).toMatchObject({ event: 'ferry.webhook.test', status: 'Delivered', attempts: '1', last: 'HTTP 200' });
    expect(run.stdout).toMatch(/^attempt\t1\t\S+\tHTTP 200\t\d+$/m);
    const [hit] = receiver.at('/ok');
    expect(hit).toBeDefined();
    const event = new Webhook(made.secret).verify(hit!.body, hit!.headers as Record<string, string>) as { id: string; eventType: string; payload: { id: string } };
    expect(event).toMatchObject({ id: fields.eventId, eventType: 'ferry.webhook.test', payload: { id: made.id } });
    expect(hit!.headers['webhook-id']).toBe(fields.eventId);
  });

  it('test without --wait prints the delivery id; --timeout without --wait is a usage error', async () => {
    const made = await consumer('/nowait');
    const run = await ferry('webhooks', 'test', made.id);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${UUID}\\n$`));
    expect(run.stderr).toContain('Sent a ferry.webhook.test event');
    const bad = await ferry('webhooks', 'test', made.id, '--timeout', '5s');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--timeout only applies with --wait');
  });

  it('a receiver down at first: the test delivery is retried and Delivered, every attempt shown', async () => {
    const made = await consumer('/flaky');
    receiver.answers.set('/flaky', [503]);
    const run = await ferry('--json', 'webhooks', 'test', made.id, '--wait', '--timeout', '60s');
    expect(run.code, run.stderr).toBe(0);
    const delivery = JSON.parse(run.stdout);
    expect(delivery).toMatchObject({ status: 'Delivered', attempts: 2, lastAttempt: { statusCode: 200 } });
    expect(delivery.attemptLog.map((a: any) => a.statusCode)).toEqual([503, 200]);
    const ids = receiver.at('/flaky').map((r) => r.headers['webhook-id']);
    expect(ids).toEqual([delivery.eventId, delivery.eventId]);
  });

  it('a 410 fails the test delivery (exit 1) and disables the consumer; a disabled one cannot be tested', async () => {
    const made = await consumer('/gone');
    receiver.answers.set('/gone', [410]);
    const run = await ferry('webhooks', 'test', made.id, '--wait');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^status\tFailed$/m);
    expect(run.stderr).toContain('The test delivery failed after 1 attempt (last: HTTP 410)');
    const list = await ferry('webhooks', 'list');
    expect(list.stdout.split('\n').find((l) => l.startsWith(made.id))).toContain('\tdisabled: The receiver answered 410 Gone.\t');
    const again = await ferry('webhooks', 'test', made.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('HTTP 409');
  });

  it('deliveries: the log of real events, filtered by status, one page or every page; replay resends under the same webhook-id', async () => {
    const made = await consumer('/log', 'company.created');
    receiver.answers.set('/log', [500]);
    const names = ['Log One', 'Log Two', 'Log Three'];
    for (const name of names) expect((await serve.api.call('POST', '/companies', { apiKey: key, body: { name } })).status).toBe(200);
    const log = async (...args: string[]) => {
      const run = await ferry('webhooks', 'deliveries', made.id, ...args);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.trim() === '' ? [] : run.stdout.trim().split('\n').map((l) => l.split('\t'));
    };
    // In order per company and consumer; the first was refused once, then retried.
    await waitFor('three deliveries Delivered', async () => (await log('--status', 'Delivered')).length === 3, 60_000, 200);
    const rows = await log();
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toEqual([expect.stringMatching(new RegExp(`^${UUID}$`)), expect.stringMatching(/^\d{4}-\d\d-\d\dT/), 'company.created', 'Delivered', expect.stringMatching(/^[12]$/), 'HTTP 200', expect.stringMatching(/^\d+$/)]);
    }
    expect(rows.map((r) => r[4]).sort()).toEqual(['1', '1', '2']);
    expect(await log('--status', 'failed')).toEqual([]);
    expect(await log('--status', 'Pending', '--all')).toEqual([]);

    const page = JSON.parse((await ferry('--json', 'webhooks', 'deliveries', made.id)).stdout);
    expect(page).toMatchObject({ pageNumber: 1, totalResults: 3 });
    expect(page.results).toHaveLength(3);
    const all = JSON.parse((await ferry('--json', 'webhooks', 'deliveries', made.id, '--all')).stdout);
    expect(all.map((d: any) => d.id)).toEqual(page.results.map((d: any) => d.id));
    const bodies = receiver.at('/log').map((r) => JSON.parse(r.body).payload.name as string);
    expect([...new Set(bodies)].sort()).toEqual([...names].sort());

    const bad = await ferry('webhooks', 'deliveries', made.id, '--status', 'Lost');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('One of: Pending, Delivered, Failed');

    const original = page.results[0];
    const before = receiver.at('/log').length;
    const replay = await ferry('webhooks', 'replay', made.id, original.id);
    expect(replay.code, replay.stderr).toBe(0);
    const replayId = replay.stdout.trim();
    expect(replayId).toMatch(new RegExp(`^${UUID}$`));
    await waitFor('the replay delivered', async () => receiver.at('/log').length > before, 30_000);
    const resent = receiver.at('/log').at(-1)!;
    expect(resent.headers['webhook-id']).toBe(original.eventId);
    expect(new Webhook(made.secret).verify(resent.body, resent.headers as Record<string, string>)).toMatchObject({ id: original.eventId });
    const missing = await ferry('webhooks', 'replay', made.id, '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('HTTP 404');
  });
});

describe('ferry webhooks delete', () => {
  it('refuses without --yes when no one can be asked, before any request (exit 2)', async () => {
    const made = await consumer('/delete-me');
    const run = await ferry('webhooks', 'delete', made.id);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Refusing without --yes');
    expect((await serve.api.call('GET', `/webhooks/${made.id}`, { apiKey: key })).status).toBe(200);
  });

  it('--yes deletes it: nothing on stdout piped, {id, deleted} with --json; an unknown id is exit 1', async () => {
    const made = await consumer('/delete-me-too');
    const run = await ferry('webhooks', 'delete', made.id, '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Deleted webhook consumer ${made.id}.`);
    expect((await serve.api.call('GET', `/webhooks/${made.id}`, { apiKey: key })).status).toBe(404);
    const other = await consumer('/delete-json');
    const json = await ferry('--json', 'webhooks', 'delete', other.id, '--yes');
    expect(JSON.parse(json.stdout)).toEqual({ id: other.id, deleted: true });
    const gone = await ferry('webhooks', 'delete', made.id, '--yes');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });
});

describe('help', () => {
  it('ferry serve and ferry worker show the webhook target flags; a bad --webhook-allow is a usage error naming it', async () => {
    for (const command of ['serve', 'worker']) {
      const help = await ferryInProcess([command, '--help']);
      expect(help.stdout).toContain('--webhook-allow-private');
      expect(help.stdout).toContain('--webhook-allow <host[:port]>');
      expect(help.stdout).toMatch(/\$ ferry \w+ .*--webhook-allow/);
      const bad = await ferryInProcess([command, '--webhook-allow', 'http://hooks.internal/']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--webhook-allow must be a host name or address with an optional port');
    }
  });

  it('every command has help with examples', async () => {
    for (const verb of ['create', 'list', 'delete', 'deliveries', 'replay', 'test']) {
      const run = await ferryInProcess(['webhooks', verb, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Examples:');
      expect(run.stdout).toContain(`$ ferry webhooks ${verb}`);
    }
  });
});
