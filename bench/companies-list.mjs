// Throughput of GET /companies?pageSize=100 over 10,000 companies, against a bare node:http
// server sending the same bytes, both measured in this run by a load generator in its own
// process. Rounds alternate bare/service so drift on a shared machine hits both alike; the
// figures are medians over rounds. Target: the service serves >= 60% of bare's requests/s.
// --store=both (the default) runs the service on SQLite and on PostgreSQL (a database of its
// own, dropped at the end) in the same rounds, each against the same bare server.
// On PostgreSQL each round also says how often the data version moved while it was measured
// (every move empties the response and auth caches; the version is the server's snapshot,
// so other databases' commits on the same server move it too) and how many pages were built.
// --breakdown adds two fastify servers (same bytes; same envelope serialised per request)
// to show what the framework and the JSON serialisation alone cost.
// --observed adds, per store, the same service with Prometheus metrics on and a JSON log line
// per request (written to a file, as a shipper would read it), and prints its throughput
// against the plain one's. Target: within 5% (>= 95% of the plain service's requests/s).
// With --observed both services of a store run as operators run them, each a `ferry serve`
// process of its own (lib.mjs startSeededServe): the plain one with --log-format off, the
// observed one with --metrics-port 0 --log-format json and its stderr to a file. In-process
// services would share this process's event loop with each other and the baselines. The
// pair takes turns which goes first, round by round. (Their caches are not watched: that
// needs the service in this process.)
// Usage: npm run build && node bench/companies-list.mjs [--store=sqlite|postgres|both] [--rounds=3] [--duration=5] [--connections=16] [--breakdown] [--observed]
import { request } from 'undici';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STORE_NAMES, countLines, median, option, runLoad, startBareServer, startFastifyServer, startSeededServe, startSeededService, storesOption, warnIfBusy } from './lib.mjs';

const TARGET = 0.6;
const OBSERVED_TARGET = 0.95;
const observed = process.argv.includes('--observed');
const logDir = observed ? mkdtempSync(join(tmpdir(), 'ferry-bench-logs-')) : undefined;

/** A store's plain service and its observed twin, each a `ferry serve` process; the latter's stderr (its JSON log) in a file of its own. */
async function startPair(store) {
  const plain = await startSeededServe({ companies: 10_000, store, args: ['--log-format', 'off'] });
  try {
    const logFile = join(logDir, `${store}.log`);
    const twin = await startSeededServe({ companies: 10_000, store, args: ['--metrics-port', '0', '--log-format', 'json', '--log-level', 'info'], stderrFile: logFile });
    return [plain, { ...twin, observed: true, logFile }];
  } catch (err) {
    await plain.stop();
    throw err;
  }
}
const PATH = '/companies?pageSize=100';
const rounds = option('rounds', 3);
const load = { connections: option('connections', 16), warmup: option('warmup', 1), duration: option('duration', 5) };

/** The targets with each plain service and its observed twin (next to it) in each other's place. */
function swapPairs(targets) {
  const swapped = [...targets];
  for (let i = 0; i < swapped.length - 1; i++) {
    if (swapped[i].service && !swapped[i].observed && swapped[i + 1].observed) [swapped[i], swapped[i + 1]] = [swapped[i + 1], swapped[i]];
  }
  return swapped;
}

/** Counts, on a PostgreSQL service, the data versions its caches saw and the pages it built. */
function watchCaches(svc) {
  const store = svc.service.context.store;
  const { dataVersion, runPage } = store;
  const watch = { versions: new Set(), builds: 0 };
  store.dataVersion = async () => {
    const version = await dataVersion();
    watch.versions.add(version);
    return version;
  };
  store.runPage = (...args) => {
    watch.builds++;
    return runPage(...args);
  };
  return watch;
}

const services = [];
const servers = [];
try {
  for (const store of storesOption()) {
    if (observed) services.push(...await startPair(store));
    else services.push(await startSeededService({ companies: 10_000, store }));
  }
  // Capture one real response per store so the baselines send the same status, headers and
  // bytes; the stores hold the same rows, so their pages must be the same size.
  const samples = [];
  for (const svc of services) {
    const sample = await request(svc.baseUrl + PATH, { headers: { authorization: svc.auth } });
    const body = Buffer.from(await sample.body.arrayBuffer());
    if (sample.statusCode !== 200) throw new Error(`${STORE_NAMES[svc.store]} GET ${PATH}: ${sample.statusCode} ${body}`);
    samples.push({ sample, body });
  }
  const { sample, body } = samples[0];
  for (const [i, other] of samples.entries()) {
    if (other.body.length !== body.length) throw new Error(`${STORE_NAMES[services[i].store]} answers ${other.body.length} bytes, ${STORE_NAMES[services[0].store]} ${body.length}: not the same page`);
  }
  const headers = {};
  for (const name of ['content-type', 'content-length', 'x-correlation-id']) headers[name] = sample.headers[name];

  const targets = [
    { name: 'bare node:http, same bytes', server: await startBareServer({ headers, body }) },
    ...(process.argv.includes('--breakdown') ? [
      { name: 'fastify, same bytes', server: await startFastifyServer({ headers, body }) },
      { name: 'fastify, same object serialised', server: await startFastifyServer({ headers, object: JSON.parse(body) }) },
    ] : []),
  ];
  servers.push(...targets.map((t) => t.server));
  for (const svc of services) {
    const name = `ferry service, ${STORE_NAMES[svc.store]}${svc.observed ? ', metrics + JSON logs' : ''}`;
    targets.push({ name, server: svc, service: true, store: svc.store, observed: svc.observed, ...(svc.store === 'postgres' && svc.service ? { watch: watchCaches(svc) } : {}) });
  }

  console.log(`GET ${PATH} over 10,000 companies: ${body.length} bytes/response, ${load.connections} connections, ${rounds} rounds x ${load.duration}s`);
  await warnIfBusy();
  for (let round = 1; round <= rounds; round++) {
    // With --observed, each store's plain and observed services swap places every other round.
    const order = observed && round % 2 === 0 ? swapPairs(targets) : targets;
    for (const target of order) {
      // The warm-up's versions count too: a page built then is a page built during the run.
      if (target.watch) Object.assign(target.watch, { versions: new Set(), builds: 0 });
      const result = await runLoad({ ...load, url: target.server.baseUrl + PATH, headers: { authorization: target.server.auth ?? services[0].auth } });
      if (result.other || result.errors) throw new Error(`${target.name}: non-200 responses: ${JSON.stringify(result)}`);
      (target.rps ??= []).push(result.rps);
      target.answered = (target.answered ?? 0) + result.ok;
    }
    const watched = targets.filter((t) => t.watch).map((t) => ` (${t.name}: the data version moved ${t.watch.versions.size - 1} times, ${t.watch.builds} pages built)`);
    console.log(`  round ${round}: ${targets.map((t) => `${t.name} ${t.rps.at(-1).toFixed(0)}`).join(', ')} req/s${watched.join('')}`);
  }

  const bare = median(targets[0].rps);
  for (const target of targets) {
    const rps = median(target.rps);
    console.log(`  ${target.name.padEnd(32)} ${rps.toFixed(0).padStart(6)} req/s  ${(rps / bare * 100).toFixed(1).padStart(5)}% of bare`);
  }
  for (const target of targets.filter((t) => t.service)) {
    const ratio = median(target.rps) / bare;
    console.log(`  ${target.name}: service/bare ${(ratio * 100).toFixed(1)}% (target >= ${TARGET * 100}%): ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`);
  }
  for (const target of targets.filter((t) => t.observed)) {
    const plain = targets.find((t) => t.service && !t.observed && t.store === target.store);
    // Each round's pair ran back to back, so its ratio shares that round's load; the median of
    // those ratios is steadier than a ratio of medians taken from different rounds.
    const ratio = median(target.rps.map((rps, round) => rps / plain.rps[round]));
    const ofMedians = median(target.rps) / median(plain.rps);
    console.log(`  ${target.name}: observed/plain ${(ratio * 100).toFixed(1)}% (median of rounds' ratios; ratio of medians ${(ofMedians * 100).toFixed(1)}%) (target >= ${OBSERVED_TARGET * 100}%): ${ratio >= OBSERVED_TARGET ? 'OK' : 'BELOW TARGET'}`);
  }
  // The log holds a line per request: those measured, and the warm-ups'. Lines reach the file
  // in batches, all of them by the process's exit.
  for (const target of targets.filter((t) => t.observed)) {
    await target.server.stop();
    services.splice(services.indexOf(target.server), 1);
    const lines = await countLines(target.server.logFile);
    console.log(`  ${target.name}: ${lines} log lines for ${target.answered} responses measured (warm-ups besides)`);
    if (lines < target.answered) throw new Error(`${target.name}: fewer log lines than responses`);
  }
} finally {
  for (const server of servers) await server.stop();
  for (const svc of services) await svc.stop();
  if (logDir) rmSync(logDir, { recursive: true, force: true });
}
