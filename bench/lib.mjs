// Shared helpers for the benches: a seeded service over a fresh temp data dir, a bare
// node:http baseline, the load generator run as a child process, and small stats.
import { createHash, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The build under test: dist/ by default; FERRY_DIST=<dir> compares another build. */
export const distDir = resolve(process.env.FERRY_DIST ?? join(here, '..', 'dist'));
const { createService } = await import(pathToFileURL(join(distDir, 'service', 'app.js')).href);

export function basic(apiKey) {
  return `Basic ${Buffer.from(apiKey).toString('base64')}`;
}

/**
 * Starts the real service (rate limiting off) and seeds `companies` rows for the admin client
 * in one transaction. Every other company's name contains "co" (case-insensitively), so
 * `name~co` matches half of them.
 */
export async function startSeededService({ companies = 10_000 } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
  const service = createService({ dataDir, rateLimit: 0 });
  const { db } = service;
  const clientId = db.prepare('SELECT id FROM clients WHERE is_admin = 1 ORDER BY seq LIMIT 1').pluck().get();
  const insert = db.prepare('INSERT INTO companies (id, client_id, name, description, created, tags) VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < companies; i++) {
      const name = i % 2 === 0 ? `Contoso Trading ${i}` : `Acme Holdings ${i}`;
      const created = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const tags = JSON.stringify({ ferryKey: `key-${i}`, region: i % 3 === 0 ? 'eu' : 'us' });
      insert.run(randomUUID(), clientId, name, i % 4 === 0 ? `Seeded company number ${i}` : null, created, tags);
    }
  })();
  const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
  return {
    service,
    baseUrl,
    auth: basic(service.adminKey),
    async stop() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare node:http server answering every request with the given status, headers and bytes. */
export async function startBareServer({ status = 200, headers, body }) {
  const server = createServer((_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/**
 * A bare fastify app answering every GET with the given reply: `body` as-is (framework cost
 * only), or `object`, which fastify serialises on each request as it does the service's replies.
 */
export async function startFastifyServer({ headers, body, object }) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/*', async (_request, reply) => {
    reply.headers(object === undefined ? headers : { 'x-correlation-id': headers['x-correlation-id'] });
    return object ?? body;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { baseUrl: `http://127.0.0.1:${app.server.address().port}`, stop: () => app.close() };
}

/**
 * Runs bench/load.mjs in its own process (so the client does not share the server's event
 * loop) and returns its JSON result: { rps, ok, other, errors, seconds, bytes }.
 */
export function runLoad(options) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'load.mjs'), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`load.mjs exited with ${code}`));
      else resolve(JSON.parse(out));
    });
  });
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function option(name, fallback) {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.slice(name.length + 3)) : fallback;
}

/** Benches share 2 cores with whatever else runs: say so when other processes keep them busy. */
export async function warnIfBusy() {
  const sample = () => {
    let busy = 0;
    let all = 0;
    for (const { times } of cpus()) {
      busy += times.user + times.nice + times.sys + times.irq;
      all += times.user + times.nice + times.sys + times.irq + times.idle;
    }
    return { busy, all };
  };
  const before = sample();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = sample();
  const share = (after.busy - before.busy) / (after.all - before.all);
  if (share > 0.15) console.log(`  note: the CPUs were ${(share * 100).toFixed(0)}% busy just before the run; other processes may skew the figures`);
}

// ---- Sync benches (bench/sync-ingest.mjs, bench/dataset-read.mjs) ----

/**
 * Starts the sandbox platforms in a child process of their own, as a remote platform would
 * be (so generating its pages does not share the syncing thread), over a fresh temp data dir.
 * The child exits when its stdin closes, so it never outlives the bench.
 */
export async function startSandboxProcess(settings = { rateLimit: 0, latencyMs: 0 }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-sandbox-'));
  const appUrl = pathToFileURL(join(distDir, 'sandbox', 'app.js')).href;
  const authUrl = pathToFileURL(join(distDir, 'sandbox', 'admin-auth.js')).href;
  // A sandbox on its own: its admin routes take one key made for this run.
  const adminKey = `fy_bench_${process.pid}_${Date.now()}`;
  const code = `
    const { createSandbox } = await import(${JSON.stringify(appUrl)});
    const { fixedAdminKey } = await import(${JSON.stringify(authUrl)});
    const sandbox = createSandbox({ dataDir: ${JSON.stringify(dataDir)}, adminAuth: fixedAdminKey(${JSON.stringify(adminKey)}), ...${JSON.stringify(settings)} });
    const url = await sandbox.listen({ port: 0, host: '127.0.0.1' });
    process.stdout.write(url + '\\n');
    process.stdin.resume();
    process.stdin.on('end', () => sandbox.close().then(() => process.exit(0)));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the sandbox process exited with ${code}`)));
  });
  const call = async (method, path, body) => {
    const headers = { authorization: basic(adminKey), ...(body ? { 'content-type': 'application/json' } : {}) };
    const response = await fetch(url + path, { method, headers, body: body && JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`sandbox ${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    pid: child.pid,
    call,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The sync benches' setup: the sandbox in its own process with one Sandbox-platform (mqjo)
 * tenant of `invoices` invoices, and the real service in this process (worker thread off,
 * rate limiting off) with a company whose connection is Linked to that tenant. Pass `sandbox`
 * (from startSandboxProcess) to share one between setups; stop() then leaves it running.
 * `queuePull(dataType)` queues a pull through the API; `deps()` gives what syncOnce needs.
 */
export async function startSyncSetup({ invoices = 200_000, seed = 20_240_101, listen = false, sandbox: shared, serviceOptions = {} } = {}) {
  const sandbox = shared ?? await startSandboxProcess();
  const stopSandbox = () => (shared ? undefined : sandbox.stop());
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
  const service = createService({ dataDir, rateLimit: 0, platformUrl: sandbox.url, startWorker: false, ...serviceOptions });
  const auth = basic(service.adminKey);
  const baseUrl = listen ? await service.listen({ port: 0, host: '127.0.0.1' }) : undefined;
  const call = async (method, url, body) => {
    const response = await service.app.inject({ method, url, headers: { authorization: auth }, ...(body ? { payload: body } : {}) });
    if (response.statusCode >= 300) throw new Error(`service ${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.body ? JSON.parse(response.body) : undefined;
  };
  try {
    const [tenant] = (await sandbox.call('POST', '/admin/tenants', { platform: 'mqjo', invoices, seed })).results;
    const company = await call('POST', '/companies', { name: 'Bench Sync Ltd' });
    const connection = await call('POST', `/companies/${company.id}/connections`, { platformKey: 'mqjo' });
    await call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, tenant.tokens);
    return {
      service,
      dataDir,
      baseUrl,
      auth,
      sandbox,
      companyId: company.id,
      connectionId: connection.id,
      call,
      queuePull: (dataType) => call('POST', `/companies/${company.id}/data/queue/${dataType}`),
      deps: (extra = {}) => {
        const { store, clock, sealer, platform } = service.context;
        return { store, clock, sealer, adapter: platform, concurrency: 1, pageSize: 1000, ...extra };
      },
      async stop() {
        await service.close();
        await stopSandbox();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await service.close();
    await stopSandbox();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Sandbox tenants with fresh tokens, written as a migration CSV of `platform` at `path`:
 * `createTenants(count, seed)` makes a batch (at most 1,000) and answers the sandbox's results.
 */
export async function writeTokensCsv(path, platform, count, seed, createTenants) {
  const out = createWriteStream(path);
  let header;
  for (let made = 0; made < count; made += 1000) {
    const results = await createTenants(Math.min(1000, count - made), seed + made);
    header ??= Object.keys(results[0].tokens);
    if (made === 0) out.write(`companyName,externalId,platformKey,${header.join(',')}\n`);
    for (const t of results) out.write(`"${t.name}",${t.id},${platform},${header.map((h) => t.tokens[h] ?? '').join(',')}\n`);
  }
  out.end();
  await once(out, 'finish');
  return path;
}

/** A file's sha256, hex (outputs compared byte for byte). */
export function sha256(path) {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex'))).on('error', reject);
  });
}

/** Lines (newline bytes) in a file, read as a stream. */
export async function countLines(path) {
  let n = 0;
  for await (const chunk of createReadStream(path)) for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) n++;
  return n;
}
