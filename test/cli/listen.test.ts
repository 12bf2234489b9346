// `ferry listen --forward-to`, in this process against a real `ferry serve` (also in this
// process), forwarding to a real receiver on 127.0.0.1 that verifies every signature with
// the `standardwebhooks` package (not ferry's own code). A receiver that is down or failing
// is reported and listening goes on; Ctrl-C stops it with exit 130. Bad flags and a target
// without the stream exit 2; a key at its cap of open streams, 1. The binary itself (its
// SIGINT, its stderr) is in listen.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { startPublicApiProxy } from '../helpers/public-api-proxy.js';
import { openStream } from '../helpers/sse-reader.js';
import { createClient } from '../helpers/sync.js';
import { NODE_WARNING, startListen, useListenStack } from './listen-support.js';

describe('ferry listen --forward-to', () => {
  const stack = useListenStack();
  const { receiver, createCompany } = stack;

  it('piped: the secret and what it listens to on stderr, one tab-separated line per event on stdout', async () => {
    const key = await createClient(stack.serve.api, stack.serve.adminKey, 'Listener Ltd', 'Paid');
    const keyFile = stack.serve.keyFile('listener.key', key);
    const listen = startListen([...stack.serve.target(keyFile), '--forward-to', receiver.url], 'in-process');
    let companyId = '';
    try {
      const secret = await listen.until('the secret', () => /Session signing secret: (whsec_\S+)/.exec(listen.stderr())?.[1]);
      expect(listen.stderr()).toContain(`Ready! Listening for every event of the account on ${stack.serve.baseUrl}, forwarding to ${receiver.url}.`);
      receiver.secret = secret;
      receiver.status = () => 200;
      const before = receiver.deliveries.length;
      const created = await stack.serve.api.call('POST', '/companies', { apiKey: key, body: { name: 'Piped Ltd' } });
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
      listen.interrupt('SIGINT');
    }
    expect((await listen.exited).code).toBe(130);
    expect(listen.lines).toHaveLength(1); // the admin account's company never reached this key's stream
    expect(listen.stderr()).not.toMatch(/^error:/m);
    expect(listen.stderr()).toMatch(/Stopped listening after 1 event: 1 forwarded, 0 not accepted by the receiver; rerun the same command to listen again\./);
    expect(listen.stderr()).not.toMatch(NODE_WARNING);
  }, 60_000);

  it('refuses a --forward-to that is not an http(s) URL, and an unknown event type (exit 2)', async () => {
    const ftp = await ferry(['listen', ...stack.serve.target(), '--forward-to', 'ftp://localhost/hooks']);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain('--forward-to must be an http(s) URL');
    const relative = await ferry(['listen', ...stack.serve.target(), '--forward-to', 'localhost:3000/hooks']);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('--forward-to');
    const secretInUrl = await ferry(['listen', ...stack.serve.target(), '--forward-to', 'http://user:hunter2@localhost/hooks']);
    expect(secretInUrl.code).toBe(2);
    expect(secretInUrl.stderr).not.toContain('hunter2');
    const unknown = await ferry(['listen', ...stack.serve.target(), '--forward-to', receiver.url, '--events', 'company.created,nope.never']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nope.never');
    expect(unknown.stderr).toContain('ferry webhooks events lists every event type.');
    expect(unknown.stderr).not.toContain('read.completed');
    expect(unknown.stdout).toBe('');
  });

  it('on a key that holds as many streams as the service allows: the service\'s message, exit 1', async () => {
    const key = await createClient(stack.serve.api, stack.serve.adminKey, 'Capped Listener Ltd', 'Paid');
    const holders = await Promise.all(Array.from({ length: 10 }, () => openStream(stack.serve.baseUrl, key, '/events/stream')));
    try {
      expect(holders.map((h) => h.status)).toEqual(Array(10).fill(200));
      const run = await ferry(['listen', ...stack.serve.target(stack.serve.keyFile('capped.key', key))]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Too many open event streams: at most 10 per API key');
      expect(run.stderr).not.toMatch(NODE_WARNING);
    } finally {
      for (const holder of holders) holder.close();
    }
  });

  it('against a target without the live stream (the public API): says so and exits 2', async () => {
    const proxy = await startPublicApiProxy(stack.serve.baseUrl);
    try {
      const run = await ferry(['listen', '--base-url', proxy.url, '--api-key-file', stack.serve.adminKeyFile, '--forward-to', receiver.url]);
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
