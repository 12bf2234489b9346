// Statements per request of a migrated row's four API calls (create the company, create its
// connection, authorize it, queue its sync), counted at the store's boundary
// (FERRY_STATEMENT_COUNTS, src/service/store/statement-count.ts) with the real service in
// this process: the sandbox in a child process of its own, the sync worker off (its pulls
// are the worker's part, counted by bench/main-job.mjs), rows one at a time. Each request's
// own statements leave out the background's, told apart by their text: the event bus's look
// for new events and the webhook loop's pass that follows it (set off by the row's events,
// and by the bus's polling every 20 ms), and the shared rate limit's settles (none here:
// rate limiting is off). Those are shown per row beside them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createBenchDatabase } from './postgres.mjs';

const REQUESTS = ['POST /companies', 'POST …/connections', 'PUT …/authorization', 'POST …/data/all'];
/** The background's statements: the event bus's look, the webhook loop's pass and timer, the rate ledger. */
const BACKGROUND = /^(SELECT coalesce\(max\(seq\), 0\) AS seq FROM events|SELECT EXISTS \(SELECT 1 FROM webhook_deliveries|SELECT min\(next_attempt\)|UPDATE webhook_deliveries SET (next_attempt|lease_until)|WITH used AS|WITH buckets AS)/;

/**
 * Runs `rows` rows on `store` ('sqlite' or 'postgres') and answers
 * { perRequest: { [request]: { statements, commits } }, requests: { statements, commits }, mainThread: { statements, commits } }, all per row.
 */
export async function countRowStatements({ distDir, store, rows, sandbox, platform = 'gbol' }) {
  const countDir = mkdtempSync(join(tmpdir(), 'ferry-bench-counts-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-rows-'));
  const previous = process.env.FERRY_STATEMENT_COUNTS;
  process.env.FERRY_STATEMENT_COUNTS = countDir;
  const database = store === 'postgres' ? await createBenchDatabase() : undefined;
  let service;
  try {
    const { statementTally } = await import(pathToFileURL(join(distDir, 'service', 'store', 'statement-count.js')).href);
    const { createService } = await import(pathToFileURL(join(distDir, 'service', 'app.js')).href);
    const tally = statementTally();
    service = await createService({ dataDir, rateLimit: 0, platformUrl: sandbox.url, startWorker: false, ...(database ? { database: database.url } : {}) });
    const auth = `Basic ${Buffer.from(service.adminKey).toString('base64')}`;
    const call = async (method, url, body) => {
      const response = await service.app.inject({ method, url, headers: { authorization: auth }, ...(body ? { payload: body } : {}) });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.body ? JSON.parse(response.body) : undefined;
    };
    const tenants = (await sandbox.call('POST', '/admin/tenants', { platform, count: rows, seed: 700_000 })).results;
    const sums = Object.fromEntries(REQUESTS.map((name) => [name, { statements: 0, commits: 0 }]));
    const background = () => Object.entries(tally.totals.texts).reduce((n, [text, count]) => n + (BACKGROUND.test(text) ? count : 0), 0);
    const snapshot = () => ({ statements: tally.totals.statements, commits: tally.totals.commits, background: background() });
    const timed = async (name, work) => {
      const before = snapshot();
      const result = await work();
      const after = snapshot();
      sums[name].statements += after.statements - before.statements - (after.background - before.background);
      sums[name].commits += after.commits - before.commits;
      return result;
    };
    // One row first, not counted: the first request of a kind prepares what later ones reuse.
    const rowOf = async (tenant, count) => {
      const run = count ? timed : (_name, work) => work();
      const company = await run(REQUESTS[0], () => call('POST', '/companies', { name: tenant.name, tags: { ferryKey: `ext:${tenant.id}` } }));
      const connection = await run(REQUESTS[1], () => call('POST', `/companies/${company.id}/connections`, { platformKey: platform }));
      await run(REQUESTS[2], () => call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, tenant.tokens));
      await run(REQUESTS[3], () => call('POST', `/companies/${company.id}/data/all`));
    };
    await rowOf(tenants[0], false);
    const start = snapshot();
    for (const tenant of tenants.slice(1)) await rowOf(tenant, true);
    // What the last row's events set off after its answers.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const end = snapshot();
    const counted = rows - 1;
    const per = ({ statements, commits }) => ({ statements: statements / counted, commits: commits / counted });
    const perRequest = Object.fromEntries(REQUESTS.map((name) => [name, per(sums[name])]));
    const requests = per(Object.values(sums).reduce((a, b) => ({ statements: a.statements + b.statements, commits: a.commits + b.commits })));
    const mainThread = per({ statements: end.statements - start.statements, commits: end.commits - start.commits });
    const backgroundPerRow = per({ statements: end.background - start.background, commits: 0 });
    return { perRequest, requests, background: backgroundPerRow, mainThread, texts: tally.totals.texts };
  } finally {
    await service?.close();
    await database?.drop();
    if (previous === undefined) delete process.env.FERRY_STATEMENT_COUNTS;
    else process.env.FERRY_STATEMENT_COUNTS = previous;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(countDir, { recursive: true, force: true });
  }
}

/** The breakdown as printed lines. */
export function describeRowStatements(name, counts) {
  const f = ({ statements, commits }) => `${statements.toFixed(1)} statements, ${commits.toFixed(2)} commits`;
  return [
    `${name}: the four API requests of a migrated row (sync worker off):`,
    ...Object.entries(counts.perRequest).map(([request, c]) => `   ${request.padEnd(22)} ${f(c)}`),
    `   ${'the four together'.padEnd(22)} ${f(counts.requests)}`,
    `   ${'background per row'.padEnd(22)} ${counts.background.statements.toFixed(1)} statements (the event bus's looks, the webhook loop's passes)`,
    `   ${'main thread per row'.padEnd(22)} ${f(counts.mainThread)}`,
  ];
}
