// Throughput of GET /companies?pageSize=100 over 10,000 companies, against a bare node:http
// server sending the same bytes, both measured in this run by a load generator in its own
// process. Rounds alternate bare/service so drift on a shared machine hits both alike; the
// figures are medians over rounds. Target: the service serves >= 60% of bare's requests/s.
// --breakdown adds two fastify servers (same bytes; same envelope serialised per request)
// to show what the framework and the JSON serialisation alone cost.
// Usage: npm run build && node bench/companies-list.mjs [--rounds=3] [--duration=5] [--connections=16] [--breakdown]
import { request } from 'undici';
import { median, option, runLoad, startBareServer, startFastifyServer, startSeededService, warnIfBusy } from './lib.mjs';

const TARGET = 0.6;
const PATH = '/companies?pageSize=100';
const rounds = option('rounds', 3);
const load = { connections: option('connections', 16), warmup: option('warmup', 1), duration: option('duration', 5) };

const svc = await startSeededService({ companies: 10_000 });
const servers = [];
try {
  // Capture one real response so the baselines send the same status, headers and bytes.
  const sample = await request(svc.baseUrl + PATH, { headers: { authorization: svc.auth } });
  const body = Buffer.from(await sample.body.arrayBuffer());
  if (sample.statusCode !== 200) throw new Error(`GET ${PATH}: ${sample.statusCode} ${body}`);
  const headers = {};
  for (const name of ['content-type', 'content-length', 'x-correlation-id']) headers[name] = sample.headers[name];

  const targets = [
    { name: 'bare node:http, same bytes', server: await startBareServer({ headers, body }) },
    ...(process.argv.includes('--breakdown') ? [
      { name: 'fastify, same bytes', server: await startFastifyServer({ headers, body }) },
      { name: 'fastify, same object serialised', server: await startFastifyServer({ headers, object: JSON.parse(body) }) },
    ] : []),
    { name: 'ferry service', server: svc },
  ];
  servers.push(...targets.slice(0, -1).map((t) => t.server));

  console.log(`GET ${PATH} over 10,000 companies: ${body.length} bytes/response, ${load.connections} connections, ${rounds} rounds x ${load.duration}s`);
  await warnIfBusy();
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      const result = await runLoad({ ...load, url: target.server.baseUrl + PATH, headers: { authorization: svc.auth } });
      if (result.other || result.errors) throw new Error(`${target.name}: non-200 responses: ${JSON.stringify(result)}`);
      (target.rps ??= []).push(result.rps);
    }
    console.log(`  round ${round}: ${targets.map((t) => `${t.name} ${t.rps.at(-1).toFixed(0)}`).join(', ')} req/s`);
  }

  const bare = median(targets[0].rps);
  for (const target of targets) {
    const rps = median(target.rps);
    console.log(`  ${target.name.padEnd(32)} ${rps.toFixed(0).padStart(6)} req/s  ${(rps / bare * 100).toFixed(1).padStart(5)}% of bare`);
  }
  const ratio = median(targets.at(-1).rps) / bare;
  console.log(`  service/bare ${(ratio * 100).toFixed(1)}% (target >= ${TARGET * 100}%): ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`);
} finally {
  for (const server of servers) await server.stop();
  await svc.stop();
}
