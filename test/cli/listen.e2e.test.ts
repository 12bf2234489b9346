// `ferry listen --forward-to` as users run it: the real binary in a child process, against
// a real `ferry serve` (in this process), forwarding to a real receiver on 127.0.0.1 that
// verifies every signature with the `standardwebhooks` package. SIGINT stops it with exit
// 130, and a real process prints no Node warning and never the secret on stderr. The rest
// of `ferry listen` runs in this process in listen.test.ts.
import { describe, expect, it } from 'vitest';
import { NODE_WARNING, startListen, useListenStack } from './listen-support.js';

describe('ferry listen --forward-to', () => {
  const stack = useListenStack();
  const { receiver, createCompany } = stack;

  it('--json: prints the session, then each event with the receiver\'s answer; the receiver verifies every signature; SIGINT exits 130', async () => {
    const listen = startListen([...stack.serve.target(), '--forward-to', receiver.url, '--events', 'company.created,company.deleted', '--json'], 'child');
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
      const listed = await stack.serve.api.call('GET', `/events?after=${line!.sequence - 1}&limit=1`);
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
      expect((await stack.serve.api.call('PUT', `/companies/${last}/products/lending`)).status).toBeLessThan(300);
      expect((await stack.serve.api.call('DELETE', `/companies/${last}`)).status).toBe(204);
      await listen.until('two more events', () => (events().length >= 5 ? true : undefined));
      expect(events().slice(3).map((e) => [e.event.eventType, e.event.payload.id, e.forward.status])).toEqual([
        ['company.created', last, 204], ['company.deleted', last, 204],
      ]);
      expect(receiver.deliveries.every((d) => d.error === undefined)).toBe(true);
      expect(new Set(receiver.deliveries.map((d) => d.headers['webhook-id'])).size).toBe(receiver.deliveries.length);
    } finally {
      listen.interrupt('SIGINT');
    }
    const { code } = await listen.exited;
    expect(code).toBe(130);
    const stderr = listen.stderr();
    expect(stderr).not.toMatch(NODE_WARNING);
    expect(JSON.parse(stderr.trim().split('\n').at(-1)!)).toMatchObject({ error: { exitCode: 130, message: expect.stringContaining('Stopped listening') } });
    // The secret is printed once, in the ready line, and nowhere else.
    expect(stderr).not.toContain('whsec_');
  }, 90_000);
});
