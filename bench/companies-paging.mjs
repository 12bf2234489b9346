// Latency of a deep page against the first page of the same filtered list: 10,000
// companies, `name~co` matches 5,000 of them, so page 50 of pageSize 100 is the last page.
// Requests alternate page 1 / page 50, one at a time; the figures are medians.
// --store=both (the default) seeds the same rows into the service on SQLite and on
// PostgreSQL (a database of its own, dropped at the end); each iteration asks every store's
// pair in turn, so drift on a shared machine hits both alike.
// Target: page 50 takes at most 2x as long as page 1.
// Usage: npm run build && node bench/companies-paging.mjs [--store=sqlite|postgres|both] [--iterations=300]
import { request } from 'undici';
import { STORE_NAMES, median, option, startSeededService, storesOption, warnIfBusy } from './lib.mjs';

const TARGET = 2;
const iterations = option('iterations', 300);
const warmup = option('warmupIterations', 30);
const url = (page) => `/companies?page=${page}&pageSize=100&query=${encodeURIComponent('name~co')}`;
// The response cache keeps nothing (its bounds are 0 bytes), so every page is counted,
// filtered and read from the database every time. (An unknown parameter no longer keeps
// it out: the cache key holds only the parameters that shape the page.)
const NO_CACHE = { responseCache: { maxBytes: 0, maxBytesPerClient: 0 } };

const services = [];
try {
  for (const store of storesOption()) services.push(await startSeededService({ companies: 10_000, store, serviceOptions: NO_CACHE }));
  const time = async (svc, page) => {
    const started = performance.now();
    const response = await request(svc.baseUrl + url(page), { headers: { authorization: svc.auth } });
    const text = await response.body.text();
    const ms = performance.now() - started;
    const body = JSON.parse(text);
    if (response.statusCode !== 200 || body.results.length !== 100 || body.totalResults !== 5000) {
      throw new Error(`${STORE_NAMES[svc.store]} page ${page}: ${response.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
    }
    return ms;
  };
  for (const svc of services) svc.samples = { 1: [], 50: [] };
  for (let i = 0; i < warmup; i++) {
    for (const svc of services) {
      await time(svc, 1);
      await time(svc, 50);
    }
  }
  await warnIfBusy();
  for (let i = 0; i < iterations; i++) {
    for (const svc of services) {
      svc.samples[1].push(await time(svc, 1));
      svc.samples[50].push(await time(svc, 50));
    }
  }
  console.log(`GET ${url('N')} over 10,000 companies (5,000 match), ${iterations} requests per page`);
  for (const svc of services) {
    const [first, deep] = [median(svc.samples[1]), median(svc.samples[50])];
    const ratio = deep / first;
    console.log(`  ${STORE_NAMES[svc.store]}:`);
    console.log(`    page 1   ${first.toFixed(2).padStart(6)} ms (median)`);
    console.log(`    page 50  ${deep.toFixed(2).padStart(6)} ms (median)`);
    console.log(`    ratio    ${ratio.toFixed(2)}x (target <= ${TARGET}x): ${ratio <= TARGET ? 'OK' : 'ABOVE TARGET'}`);
  }
} finally {
  for (const svc of services) await svc.stop();
}
