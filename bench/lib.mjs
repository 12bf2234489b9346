// Shared helpers for the benches: a seeded service over a fresh temp data dir (on SQLite, or
// on a PostgreSQL database of its own: lib/postgres.mjs), a bare node:http baseline, the
// load generator run as a child process, and small stats.
import { createHash, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { closeSync, createReadStream, createWriteStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { createBenchDatabase, numbered } from './lib/postgres.mjs';

export { STORE_NAMES, createBenchDatabase, storesOption } from './lib/postgres.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** The build under test: dist/ by default; FERRY_DIST=<dir> compares another build. */
export const distDir = resolve(process.env.FERRY_DIST ?? join(here, '..', 'dist'));
const { createService } = await import(pathToFileURL(join(distDir, 'service', 'app.js')).href);

export function basic(apiKey) {
  return `Basic ${Buffer.from(apiKey).toString('base64')}`;
}

/** The service on the given store (`sqlite` in its data dir, or `postgres` in a fresh database of its own); stop() removes both. */
async function startService(store, options) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
  let database;
  try {
    if (store === 'postgres') database = await createBenchDatabase();
    const service = await createService({ dataDir, rateLimit: 0, ...options, ...(database ? { database: database.url } : {}) });
    let pool;
    return {
      service,
      dataDir,
      database,
      /** Rows of one SQL text (`?` placeholders) straight from the store's database, beside the service. */
      async query(sql, params = []) {
        if (!database) return service.db.prepare(sql).all(...params);
        if (!pool) {
          pool = new pg.Pool({ connectionString: database.url, max: 2 });
          pool.on('error', () => undefined); // an idle connection ended by the drop on Ctrl-C
        }
        return (await pool.query(numbered(sql), params)).rows;
      },
      /** Closes the service (and the query pool), keeping its data dir and database. */
      async close() {
        await service.close();
        await pool?.end();
        pool = undefined;
      },
      /** Removes the data dir and the database (after close()). */
      async remove() {
        try {
          await database?.drop();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
      async stop() {
        try {
          await service.close();
          await pool?.end();
        } finally {
          await database?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts the real service (rate limiting off) on `store` and seeds `companies` rows for the
 * admin client in one transaction. Every other company's name contains "co" (case-insensitively),
 * so `name~co` matches half of them. On PostgreSQL the table is then analysed, as autovacuum
 * would soon do, so the planner knows its size.
 */
export async function startSeededService({ companies = 10_000, store = 'sqlite', serviceOptions = {} } = {}) {
  const started = await startService(store, serviceOptions);
  const { service } = started;
  try {
    await seedCompanies(started, companies);
    const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
    return { ...started, store, baseUrl, auth: basic(service.adminKey) };
  } catch (err) {
    await started.stop();
    throw err;
  }
}

/** `companies` rows for the admin client, as startSeededService describes. */
async function seedCompanies(started, companies) {
  const { service } = started;
  const [{ id: clientId }] = await started.query('SELECT id FROM clients WHERE is_admin = 1 ORDER BY seq LIMIT 1');
  const rows = Array.from({ length: companies }, (_, i) => ({
    id: randomUUID(),
    name: i % 2 === 0 ? `Contoso Trading ${i}` : `Acme Holdings ${i}`,
    description: i % 4 === 0 ? `Seeded company number ${i}` : null,
    created: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    tags: JSON.stringify({ ferryKey: `key-${i}`, region: i % 3 === 0 ? 'eu' : 'us' }),
  }));
  if (service.db) {
    const insert = service.db.prepare('INSERT INTO companies (id, client_id, name, description, created, tags) VALUES (?, ?, ?, ?, ?, ?)');
    service.db.transaction(() => {
      for (const r of rows) insert.run(r.id, clientId, r.name, r.description, r.created, r.tags);
    })();
  } else {
    const column = (name) => rows.map((r) => r[name]);
    await started.query(`INSERT INTO companies (id, client_id, name, description, created, tags)
      SELECT c.id, ?, c.name, c.description, c.created, c.tags::json
      FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS c(id, name, description, created, tags, n) ORDER BY c.n`,
    [clientId, column('id'), column('name'), column('description'), column('created'), column('tags')]);
    await started.query('ANALYZE companies');
  }
}

/**
 * The service as an operator runs it: a `ferry serve` process of its own (rate limiting off)
 * over a data dir (and, on PostgreSQL, a database) seeded as startSeededService seeds it
 * before the process starts. `args` are more flags of `ferry serve`; its stderr goes to
 * `stderrFile` (as `ferry serve 2> file`), else nowhere. FERRY_BENCH_NODE_ARGS adds node's
 * own flags to the process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). Resolves once the
 * process prints its --json listening line; stop() ends it with SIGTERM and removes its data.
 */
export async function startSeededServe({ companies = 10_000, store = 'sqlite', args = [], stderrFile } = {}) {
  const started = await startService(store, {});
  let child;
  try {
    await seedCompanies(started, companies);
    const auth = basic(started.service.adminKey);
    await started.close();
    const stderr = stderrFile ? openSync(stderrFile, 'w') : 'pipe';
    const nodeArgs = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    child = spawn(process.execPath, [
      ...nodeArgs, join(distDir, 'cli', 'main.js'), 'serve', '--json', '--data-dir', started.dataDir, '--host', '127.0.0.1', '--port', '0', '--rate-limit', '0',
      ...(started.database ? ['--database', started.database.url] : []), ...args,
    ], { stdio: ['ignore', 'pipe', stderr], env: { ...process.env, FERRY_DATABASE_URL: '' } });
    if (typeof stderr === 'number') closeSync(stderr);
    // Without a file, the last of stderr is kept to say why a start failed.
    let said = '';
    child.stderr?.on('data', (chunk) => { said = (said + chunk).slice(-2000); });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    const listening = await new Promise((resolve, reject) => {
      let out = '';
      const onData = (chunk) => {
        out += chunk;
        for (const line of out.split('\n').slice(0, -1)) {
          const parsed = JSON.parse(line);
          if (parsed.event === 'listening') {
            child.stdout.off('data', onData);
            child.stdout.resume();
            resolve(parsed);
          }
        }
      };
      child.stdout.on('data', onData);
      child.once('error', reject);
      exited.then((code) => reject(new Error(`ferry serve exited (${code}) before listening${stderrFile ? `; its stderr is in ${stderrFile}` : `: ${said}`}`)));
    });
    return {
      store,
      dataDir: started.dataDir,
      database: started.database,
      pid: child.pid,
      baseUrl: listening.baseUrl,
      metricsUrl: listening.metricsUrl,
      auth,
      async stop() {
        try {
          child.kill('SIGTERM');
          await exited;
        } finally {
          await started.remove();
        }
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await started.stop().catch(() => undefined);
    throw err;
  }
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
 * rate limiting off) on `store` (as startService) with a company whose connection is Linked to
 * that tenant. Pass `sandbox` (from startSandboxProcess) to share one between setups; stop()
 * then leaves it running. `queuePull(dataType)` queues a pull through the API; `deps()` gives
 * what syncOnce needs; `query(sql, params)` reads the store's database directly.
 */
export async function startSyncSetup({ invoices = 200_000, seed = 20_240_101, listen = false, sandbox: shared, serviceOptions = {}, store = 'sqlite' } = {}) {
  const sandbox = shared ?? await startSandboxProcess();
  const stopSandbox = () => (shared ? undefined : sandbox.stop());
  let started;
  try {
    started = await startService(store, { platformUrl: sandbox.url, startWorker: false, ...serviceOptions });
  } catch (err) {
    await stopSandbox();
    throw err;
  }
  const { service } = started;
  const stop = async () => {
    try {
      await started.stop();
    } finally {
      await stopSandbox();
    }
  };
  try {
    const auth = basic(service.adminKey);
    const baseUrl = listen ? await service.listen({ port: 0, host: '127.0.0.1' }) : undefined;
    const call = async (method, url, body) => {
      const response = await service.app.inject({ method, url, headers: { authorization: auth }, ...(body ? { payload: body } : {}) });
      if (response.statusCode >= 300) throw new Error(`service ${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.body ? JSON.parse(response.body) : undefined;
    };
    const [tenant] = (await sandbox.call('POST', '/admin/tenants', { platform: 'mqjo', invoices, seed })).results;
    const company = await call('POST', '/companies', { name: 'Bench Sync Ltd' });
    const connection = await call('POST', `/companies/${company.id}/connections`, { platformKey: 'mqjo' });
    await call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, tenant.tokens);
    return {
      ...started,
      store,
      baseUrl,
      auth,
      sandbox,
      companyId: company.id,
      connectionId: connection.id,
      call,
      queuePull: (dataType) => call('POST', `/companies/${company.id}/data/queue/${dataType}`),
      deps: (extra = {}) => {
        const { store: asyncStore, clock, sealer, platform } = service.context;
        return { store: asyncStore, clock, sealer, adapter: platform, concurrency: 1, pageSize: 1000, ...extra };
      },
      stop,
    };
  } catch (err) {
    await stop();
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
