// `ferry listen --forward-to` as users run it: the real binary in a child process, against
// a real `ferry serve`, forwarding to a real receiver on 127.0.0.1 that verifies every
// signature with the `standardwebhooks` package (not ferry's own code). A receiver that is
// down or failing is reported and listening goes on; SIGINT stops it with exit 130. Bad
// flags and a target without the stream exit 2; a key at its cap of open streams, 1.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv, runFerry } from '../helpers/cli.js';
import { startPublicApiProxy } from '../helpers/public-api-proxy.js';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack, type ServeProcess } from '../helpers/stack.js';
import { createClient } from '../helpers/sync.js';

interface Delivery {
  headers: Record<string, string>;
  body: string;
  verified: unknown;
  error?: string;
}

/** A receiver that verifies each request with the session's secret and answers `status(body)`. */
class Receiver {
  secret = '';
  deliveries: Delivery[] = [];
  status: (body: string) => number = () => 200;
  private server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const delivery: Delivery = { headers, body, verified: undefined };
        try {
          delivery.verified = new Webhook(this.secret).verify(body, headers);
        } catch (err) {
          delivery.error = (err as Error).message;
        }
        this.deliveries.push(delivery);
        res.writeHead(delivery.error ? 400 : this.status(body));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** `ferry listen …` as a child whose stdout lines the test waits on (with deadlines). */
function startListen(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [FERRY_BIN, 'listen', ...args], { env: cleanEnv(), stdio: 'pipe' });
  const lines: string[] = [];
  let stderr = '';
  const waiters = new Set<() => void>();
  const poke = () => {
    for (const w of [...waiters]) w();
  };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    poke();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    poke();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => {
    poke();
    resolve({ code, signal });
  }));
  const until = <T>(what: string, probe: () => T | undefined, ms = 20_000) => new Promise<T>((resolve, reject) => {
    const check = () => {
      const found = probe();
      if (found === undefined) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve(found);
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out waiting for ${what}\nstdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
    }, ms);
    waiters.add(check);
    check();
  });
  return { child, lines, stderr: () => stderr, exited, until };
}

const NODE_WARNING = /\(node:\d+\) \w*Warning: .*/;

describe('ferry listen --forward-to', () => {
  let serve: ServeProcess;
  const receiver = new Receiver();

  beforeAll(async () => {
    serve = await startTestStack('process');
    await receiver.start();
  }, 60_000);
  afterAll(async () => {
    await receiver.stop();
    await serve?.stop();
  });

  const createCompany = async (name: string): Promise<string> => {
    const result = await serve.api.call('POST', '/companies', { body: { name } });
    expect(result.status).toBe(200);
    return result.body.id as string;
  };

  it('--json: prints the session, then each event with the receiver\'s answer; the receiver verifies every signature; SIGINT exits 130', async () => {
    const listen = startListen([...serve.target(), '--forward-to', receiver.url, '--events', 'company.created,company.deleted', '--json']);
    try {
      const ready = JSON.parse(await listen.until('the ready line', () => listen.lines[0])) as Record<string, any>;
      expect(ready).toMatchObject({ type: 'ready', forwardTo: receiver.url, eventTypes: ['company.created', 'company.deleted'], companyId: null, after: expect.any(Number) });
      expect(ready.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      receiver.secret = ready.secret;
      const events = () => listen.lines.slice(1).map((l) => JSON.parse(l) as Record<string, any>);

      // Delivered and verified.
      const first = await createCompany('Forwarded Ltd');
      const [line] = await listen.until('the first event', () => (events().length >= 1 ? events() : undefined));
      expect(line).toMatchObject({ type: 'event', sequence: expect.any(Number), event: { eventType: 'company.created', payload: { id: first, name: 'Forwarded Ltd' } }, forward: { status: 200, latencyMs: expect.any(Number) } });
      expect(receiver.deliveries).toHaveLength(1);
      const [delivery] = receiver.deliveries;
      expect(delivery!.error).toBeUndefined();
      expect(delivery!.verified).toEqual(line!.event);
      expect(delivery!.headers['webhook-id']).toBe(line!.event.id);
      expect(delivery!.headers['content-type']).toBe('application/json');
      // The body is the event as the service stored it, byte for byte.
      const listed = await serve.api.call('GET', `/events?after=${line!.sequence - 1}&limit=1`);
      expect(listed.text).toContain(delivery!.body.slice(1));

      // A receiver that fails: reported on the event's line, and listening goes on.
      receiver.status = () => 503;
      await createCompany('Refused Ltd');
      await listen.until('the refused event', () => (events().length >= 2 ? true : undefined));
      expect(events()[1]!.forward).toMatchObject({ status: 503 });

      // A receiver that is down: the error is printed, not fatal.
      const port = receiver.port;
      await receiver.stop();
      await createCompany('Nobody Home Ltd');
      await listen.until('the undelivered event', () => (events().length >= 3 ? true : undefined));
      expect(events()[2]!.forward).toMatchObject({ error: expect.stringMatching(/refused|ECONNRESET|socket/i) });
      expect(events()[2]!.forward.status).toBeUndefined();

      // Back up: delivered again, still verified. An event type not asked for is not shown.
      receiver.status = () => 204;
      await receiver.start(port);
      const last = await createCompany('Back Again Ltd');
      expect((await serve.api.call('PUT', `/companies/${last}/products/lending`)).status).toBeLessThan(300);
      expect((await serve.api.call('DELETE', `/companies/${last}`)).status).toBe(204);
      await listen.until('two more events', () => (events().length >= 5 ? true : undefined));
      expect(events().slice(3).map((e) => [e.event.eventType, e.event.payload.id, e.forward.status])).toEqual([
        ['company.created', last, 204], ['company.deleted', last, 204],
      ]);
      expect(receiver.deliveries.every((d) => d.error === undefined)).toBe(true);
      expect(new Set(receiver.deliveries.map((d) => d.headers['webhook-id'])).size).toBe(receiver.deliveries.length);
    } finally {
      listen.child.kill('SIGINT');
    }
    const { code } = await listen.exited;
    expect(code).toBe(130);
    const stderr = listen.stderr();
    expect(stderr).not.toMatch(NODE_WARNING);
    expect(JSON.parse(stderr.trim().split('\n').at(-1)!)).toMatchObject({ error: { exitCode: 130, message: expect.stringContaining('Stopped listening') } });
    // The secret is printed once, in the ready line, and nowhere else.
    expect(stderr).not.toContain('whsec_');
  }, 90_000);

  it('piped: the secret and what it listens to on stderr, one tab-separated line per event on stdout', async () => {
    const key = await createClient(serve.api, serve.adminKey, 'Listener Ltd', 'Paid');
    const keyFile = serve.keyFile('listener.key', key);
    const listen = startListen([...serve.target(keyFile), '--forward-to', receiver.url]);
    let companyId = '';
    try {
      const secret = await listen.until('the secret', () => /Session signing secret: (whsec_\S+)/.exec(listen.stderr())?.[1]);
      expect(listen.stderr()).toContain(`Ready! Listening for every event of the account on ${serve.baseUrl}, forwarding to ${receiver.url}.`);
      receiver.secret = secret;
      receiver.status = () => 200;
      const before = receiver.deliveries.length;
      const created = await serve.api.call('POST', '/companies', { apiKey: key, body: { name: 'Piped Ltd' } });
      companyId = created.body.id;
      await createCompany('The admin account\'s, not shown');
      const line = await listen.until('the event line', () => listen.lines[0]);
      const [sequence, generated, eventType, company, status, latency, eventId] = line.split('\t');
      // The account's own number: its first event, however many the admin account's came before.
      expect(sequence).toBe('1');
      expect(generated).toMatch(/Z$/);
      expect([eventType, company, status]).toEqual(['company.created', companyId, '200']);
      expect(Number(latency)).toBeGreaterThanOrEqual(0);
      expect(receiver.deliveries.slice(before).map((d) => [d.error, d.headers['webhook-id']])).toEqual([[undefined, eventId]]);
    } finally {
      listen.child.kill('SIGINT');
    }
    expect((await listen.exited).code).toBe(130);
    expect(listen.lines).toHaveLength(1); // the admin account's company never reached this key's stream
    expect(listen.stderr()).toMatch(/Stopped listening \(interrupted\) after 1 event: 1 forwarded, 0 not accepted/);
    expect(listen.stderr()).not.toMatch(NODE_WARNING);
  }, 60_000);

  it('refuses a --forward-to that is not an http(s) URL, and an unknown event type (exit 2)', async () => {
    const ftp = await runFerry(['listen', ...serve.target(), '--forward-to', 'ftp://localhost/hooks']);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain('--forward-to must be an http(s) URL');
    const relative = await runFerry(['listen', ...serve.target(), '--forward-to', 'localhost:3000/hooks']);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('--forward-to');
    const secretInUrl = await runFerry(['listen', ...serve.target(), '--forward-to', 'http://user:hunter2@localhost/hooks']);
    expect(secretInUrl.code).toBe(2);
    expect(secretInUrl.stderr).not.toContain('hunter2');
    const unknown = await runFerry(['listen', ...serve.target(), '--forward-to', receiver.url, '--events', 'company.created,nope.never']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nope.never');
    expect(unknown.stderr).toContain('read.completed');
    expect(unknown.stdout).toBe('');
  });

  it('on a key that holds as many streams as the service allows: the service\'s message, exit 1', async () => {
    const key = await createClient(serve.api, serve.adminKey, 'Capped Listener Ltd', 'Paid');
    const holders = await Promise.all(Array.from({ length: 10 }, () => openStream(serve.baseUrl, key, '/events/stream')));
    try {
      expect(holders.map((h) => h.status)).toEqual(Array(10).fill(200));
      const run = await runFerry(['listen', ...serve.target(serve.keyFile('capped.key', key))]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Too many open event streams: at most 10 per API key');
      expect(run.stderr).not.toMatch(NODE_WARNING);
    } finally {
      for (const holder of holders) holder.close();
    }
  });

  it('against a target without the live stream (the public API): says so and exits 2', async () => {
    const proxy = await startPublicApiProxy(serve.baseUrl);
    try {
      const run = await runFerry(['listen', '--base-url', proxy.url, '--api-key-file', serve.adminKeyFile, '--forward-to', receiver.url]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('has no live event stream');
      expect(run.stderr).toContain('hint:');
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toContain('whsec_');
    } finally {
      await proxy.close();
    }
  });
});
