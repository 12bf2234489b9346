// The real binary (bin/ferry.js → dist/) in a pipeline whose reader goes away, against
// the public API alone (a proxy in front of a `ferry serve` in this process): what main.ts
// does on EPIPE, which only a real process with a real pipe shows.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv } from '../helpers/cli.js';
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';
import { createClient } from '../helpers/sync.js';
import { stopCleanly } from '../migrate/support.js';

let stack: ServeHandle;
let proxy: PublicApiProxy;
let target: string[];

beforeAll(async () => {
  stack = await startTestStack('serve');
  proxy = await startPublicApiProxy(stack.baseUrl, { latencyMs: 3 });
  const key = await createClient(stack.api, stack.adminKey, 'Public Api Ltd', 'Paid');
  target = ['--base-url', proxy.url, '--api-key-file', stack.keyFile('client.key', key)];
});

afterAll(async () => {
  await proxy?.close();
  await stopCleanly(stack);
});

describe('a pipeline that stops reading', () => {
  it('`ferry … | head`: ferry stops quietly with exit 0, no stack trace', async () => {
    const child = spawn(process.execPath, [FERRY_BIN, ...target, 'integrations', 'get', 'gbol'], { env: cleanEnv(), stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The reader is gone before ferry writes its first line (it asks the service first).
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(code).toBe(0);
  });
});
