// `ferry sandbox serve` and `ferry serve --sandbox-url` as real child processes: SIGTERM
// and SIGINT stop each with exit 0 and no Node warning, and the plain listening line. What
// the two do together runs in this process in sandbox-serve.test.ts.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv } from '../helpers/cli.js';
import { reservePort, startSandboxServe, type SandboxServe } from '../helpers/processes.js';
import { basic, tempDir } from '../helpers/service.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';

const NODE_WARNING = /\(node:\d+\) \w*Warning: /;

async function sandboxAdmin(sandboxUrl: string, apiKey: string | undefined, path = '/admin/tenants'): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(sandboxUrl + path, { headers: apiKey === undefined ? {} : { authorization: basic(apiKey) } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe('ferry sandbox serve beside ferry serve --sandbox-url, as processes', () => {
  const work = tempDir('ferry-sandbox-serve-');
  const sandboxData = join(work, 'sandbox');
  const serviceData = join(work, 'service');
  let servicePort: number;
  let serviceUrl: string;
  let sandbox: SandboxServe;
  let serve: ServeProcess | undefined;

  const startService = () => startTestStack('process', { dataDir: serviceData, args: ['--port', String(servicePort), '--sandbox-url', sandbox.url] });

  beforeAll(async () => {
    // Each process needs the other's URL, and a port-0 process learns its own only once it
    // listens. The sandbox only asks the service when an admin request comes, so reserve the
    // service's port first, give it to the sandbox as --service-url, start the sandbox on
    // port 0, then the service on the reserved port with the sandbox's URL.
    servicePort = await reservePort();
    serviceUrl = `http://127.0.0.1:${servicePort}`;
    sandbox = await startSandboxServe(['--data-dir', sandboxData, '--service-url', serviceUrl]);
    serve = await startService();
  });

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await sandbox?.stop('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('SIGTERM stops each process with exit 0', async () => {
    const service = await serve!.stop('SIGTERM');
    serve = undefined;
    expect(service.code, service.stderr).toBe(0);
    const stopped = await sandbox.stop('SIGTERM');
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([sandbox.ready, { event: 'stopped' }]);
    expect(stopped.stderr).not.toMatch(NODE_WARNING);
  });
});

describe('ferry sandbox serve on its own', () => {
  it('without --service-url: says so at start, refuses every admin request with 401, stops on SIGINT', async () => {
    const dataDir = tempDir('ferry-sandbox-alone-');
    const sandbox = await startSandboxServe(['--data-dir', dataDir]);
    try {
      await waitFor('the notice on stderr', async () => sandbox.stderr().includes('admin routes are shut'), 10_000);
      expect(sandbox.stderr()).toContain('--service-url');
      const refused = await sandboxAdmin(sandbox.url, 'fy_any_key');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('Basic');
      const stopped = await sandbox.stop('SIGINT');
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain('{"event":"stopped"}');
    } finally {
      await sandbox.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('prints listening URL without --json', async () => {
    const dataDir = tempDir('ferry-sandbox-plain-');
    const child = spawn(process.execPath, [FERRY_BIN, 'sandbox', 'serve', '--port', '0', '--data-dir', dataDir], { env: cleanEnv(), stdio: 'pipe' });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no listening line within 30 s')), 30_000);
        createInterface({ input: child.stdout }).once('line', (first) => {
          clearTimeout(timer);
          resolve(first);
        });
      });
      expect(line).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+$/);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
