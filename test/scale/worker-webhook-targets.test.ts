// `ferry worker --webhook-allow HOST:PORT` (run in this process, as the binary runs it) on
// PostgreSQL beside an API instance: the worker's own choice governs the connections it makes. Two consumers on
// 127.0.0.1 (the API instance let both be created): the worker delivers to the port it
// was told to allow, and refuses the other at connection time ("address not allowed").
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TARGET_REFUSED } from '../../src/service/webhooks/attempt.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { startInProcess, type InProcessCommand } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from '../webhooks/support.js';

describePostgres('ferry worker and the webhook target flags', () => {
  const root = tempDir('ferry-worker-targets-');
  const stops: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('delivers where --webhook-allow lets it, and refuses every other private target at connection time', async () => {
    const database = await freshDatabase();
    const keyFile = join(root, 'secret.key');
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const allowed: Receiver = await startReceiver();
    stops.push(() => allowed.close());
    const other: Receiver = await startReceiver();
    stops.push(() => other.close());

    // The API instance delivers nothing itself (as `ferry serve --no-worker`) and takes both urls.
    const api: TestService = await startTestStack('service', {
      dataDir: join(root, 'api'), database, secretKeyFile: keyFile, startWebhooks: false, webhookTargets: { allowPrivate: true },
    });
    stops.push(() => api.stop());
    const worker: InProcessCommand = await startInProcess([
      'worker', '--database', database, '--secret-key-file', keyFile, '--data-dir', join(root, 'worker'),
      // No pulls here: the platforms are never asked.
      '--sandbox-url', 'http://127.0.0.1:9', '--webhook-allow', `127.0.0.1:${allowed.port}`,
    ]);
    stops.push(() => worker.stop());

    const { apiKey } = await api.createClient('Worker Hooks Ltd', 'Paid');
    const ids: string[] = [];
    for (const url of [allowed.url, other.url]) {
      const made = await api.call('POST', '/webhooks', { apiKey, body: { url, eventTypes: ['company.created'] } });
      expect(made.status, made.text).toBe(201);
      ids.push(made.body.id);
    }
    await api.call('POST', '/companies', { apiKey, body: { name: 'Delivered by the worker' } });
    await waitFor('the allowed delivery', async () => allowed.received.length === 1, 30_000);
    const refused = await waitFor('the refused attempt', async () => (await api.call('GET', `/webhooks/${ids[1]}/deliveries`, { apiKey })).body.results[0]?.lastAttempt, 30_000);
    expect(refused).toEqual({ at: expect.any(String), error: TARGET_REFUSED, latencyMs: 0 });
    expect(other.requests).toBe(0);
  });
});
