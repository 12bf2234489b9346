// What `ferry serve` exposes and to whom: the sandbox's admin routes take ferry's admin
// key only and listen on 127.0.0.1 unless told otherwise, and links in responses come from
// configuration (--public-url, or forwarded headers with --trust-proxy), never from the
// Host header a client sends. `ferry serve` and the commands run in this process.
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../src/stack.js';
import { ferry } from '../helpers/in-process.js';
import { basic, tempDir } from '../helpers/service.js';
import { apiClient, createClient } from '../helpers/sync.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';

/** GET with a Host header of our choosing (fetch does not allow setting it). */
function getWithHost(url: string, path: string, apiKey: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, method: 'GET', headers: { authorization: basic(apiKey), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject).end();
  });
}

const adminCall = (sandboxUrl: string, key: string | undefined) =>
  fetch(`${sandboxUrl}/admin/tenants?platform=gbol`, { headers: key ? { authorization: basic(key) } : {} });

describe('the sandbox admin routes', () => {
  const dataDir = tempDir('ferry-exposure-');
  let stack: Stack;
  let clientKey: string;

  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir, rateLimit: 0 });
    clientKey = await createClient(apiClient(stack.baseUrl, stack.adminKey), stack.adminKey, 'Not Admin', 'Paid');
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answer 401 without a key or with an unknown one', async () => {
    expect((await adminCall(stack.sandboxUrl, undefined)).status).toBe(401);
    expect((await adminCall(stack.sandboxUrl, 'fy_not-a-key')).status).toBe(401);
    const minted = await fetch(`${stack.sandboxUrl}/admin/tenants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"platform":"gbol"}' });
    expect(minted.status).toBe(401);
  });

  it('answer 403 to a client key', async () => {
    expect((await adminCall(stack.sandboxUrl, clientKey)).status).toBe(403);
  });

  it('answer the admin key, and admin keys created later, and refuse them once revoked', async () => {
    expect((await adminCall(stack.sandboxUrl, stack.adminKey)).status).toBe(200);
    const admin = apiClient(stack.baseUrl, stack.adminKey);
    const profile = await admin.call('GET', '/profile');
    const created = await admin.call('POST', `/admin/clients/${profile.body.clientId}/apiKeys`);
    expect(created.status, created.text).toBeLessThan(300);
    expect((await adminCall(stack.sandboxUrl, created.body.apiKey)).status).toBe(200);
    const revoked = await admin.call('DELETE', `/admin/clients/${profile.body.clientId}/apiKeys/${created.body.id}`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect((await adminCall(stack.sandboxUrl, created.body.apiKey)).status).toBe(403);
  });

  it('still serve the platform routes to platform tokens (no admin key needed there)', async () => {
    const response = await fetch(`${stack.sandboxUrl}/platforms/gbol/tenants/x/invoices`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('ferry sandbox commands send the admin key', async () => {
    const keyFile = join(dataDir, 'admin.key');
    const run = await ferry(['--base-url', stack.baseUrl, '--api-key-file', keyFile, 'sandbox', 'tenants', 'list', '--platform', 'gbol']);
    expect(run.code, run.stderr).toBe(0);
  });
});

describe('ferry serve --host 0.0.0.0', () => {
  let serve: ServeHandle;
  const dataDir = tempDir('ferry-exposure-serve-');
  const outside = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  beforeAll(async () => {
    serve = await startTestStack('serve', { dataDir, args: ['--host', '0.0.0.0', '--public-url', 'https://ferry.example.com/'] });
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the sandbox on 127.0.0.1', async () => {
    expect(new URL(serve.listening.sandboxUrl!).hostname).toBe('127.0.0.1');
    const port = new URL(serve.listening.sandboxUrl!).port;
    if (outside) await expect(fetch(`http://${outside}:${port}/admin/tenants`)).rejects.toThrow();
  });

  it('builds links on --public-url whatever Host says', async () => {
    const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const api = apiClient(serve.listening.baseUrl!, adminKey);
    const company = await api.call('POST', '/companies', { body: { name: 'Links Ltd' } });
    const connection = await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: 'gbol' } });
    for (const path of ['/companies', `/companies/${company.body.id}`, `/companies/${company.body.id}/connections/${connection.body.id}`]) {
      const result = await getWithHost(serve.listening.baseUrl!, path, adminKey, { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
      expect(result.status, result.text).toBe(200);
      expect(result.text).not.toContain('evil.example');
      expect(result.text).toContain('https://ferry.example.com/link/companies/');
    }
  });
});

describe('--trust-proxy and the default public URL', () => {
  const dataDir = tempDir('ferry-exposure-proxy-');
  let trusting: Stack;
  let plain: Stack;
  beforeAll(async () => {
    trusting = await startTestStack('threads', { dataDir: join(dataDir, 'a'), rateLimit: 0, trustProxy: true, publicUrl: 'https://public.example.com' });
    plain = await startTestStack('threads', { dataDir: join(dataDir, 'b'), rateLimit: 0 });
  });
  afterAll(async () => {
    await trusting?.close();
    await plain?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('with --trust-proxy, forwarded headers build the links; without them, the public URL', async () => {
    const forwarded = await getWithHost(trusting.baseUrl, '/companies', trusting.adminKey, { 'x-forwarded-host': 'proxy.example.com', 'x-forwarded-proto': 'https' });
    await apiClient(trusting.baseUrl, trusting.adminKey).call('POST', '/companies', { body: { name: 'Proxied' } });
    const listed = await getWithHost(trusting.baseUrl, '/companies', trusting.adminKey, { 'x-forwarded-host': 'proxy.example.com', 'x-forwarded-proto': 'https' });
    expect(forwarded.status).toBe(200);
    expect(listed.text).toContain('https://proxy.example.com/link/companies/');
    const direct = await getWithHost(trusting.baseUrl, '/companies', trusting.adminKey, { host: 'evil.example' });
    expect(direct.text).toContain('https://public.example.com/link/companies/');
    expect(direct.text).not.toContain('evil.example');
  });

  it('with no configuration, links use the listening address, not Host', async () => {
    await apiClient(plain.baseUrl, plain.adminKey).call('POST', '/companies', { body: { name: 'Plain' } });
    const result = await getWithHost(plain.baseUrl, '/companies', plain.adminKey, { host: 'evil.example', 'x-forwarded-host': 'evil.example' });
    expect(result.text).toContain(`${plain.baseUrl}/link/companies/`);
    expect(result.text).not.toContain('evil.example');
  });
});
