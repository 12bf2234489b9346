// Latency of a deep page against the first page of the same filtered list: 10,000
// companies, `name~co` matches 5,000 of them, so page 50 of pageSize 100 is the last page.
// Requests alternate page 1 / page 50, one at a time; the figures are medians.
// Target: page 50 takes at most 2x as long as page 1.
// Usage: npm run build && node bench/companies-paging.mjs [--iterations=300]
import { request } from 'undici';
import { median, option, startSeededService, warnIfBusy } from './lib.mjs';

const TARGET = 2;
const iterations = option('iterations', 300);
const warmup = option('warmupIterations', 30);
// A fresh `n` on every request keeps the service's response cache out of the measure:
// each page is counted, filtered and read from SQLite every time.
let n = 0;
const url = (page) => `/companies?page=${page}&pageSize=100&query=${encodeURIComponent('name~co')}&n=${n++}`;

const svc = await startSeededService({ companies: 10_000 });
try {
  const time = async (page) => {
    const started = performance.now();
    const response = await request(svc.baseUrl + url(page), { headers: { authorization: svc.auth } });
    const text = await response.body.text();
    const ms = performance.now() - started;
    const body = JSON.parse(text);
    if (response.statusCode !== 200 || body.results.length !== 100 || body.totalResults !== 5000) {
      throw new Error(`page ${page}: ${response.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
    }
    return ms;
  };
  const samples = { 1: [], 50: [] };
  for (let i = 0; i < warmup; i++) {
    await time(1);
    await time(50);
  }
  await warnIfBusy();
  for (let i = 0; i < iterations; i++) {
    samples[1].push(await time(1));
    samples[50].push(await time(50));
  }
  const [first, deep] = [median(samples[1]), median(samples[50])];
  const ratio = deep / first;
  console.log(`GET ${url('N')} over 10,000 companies (5,000 match), ${iterations} requests per page`);
  console.log(`  page 1   ${first.toFixed(2).padStart(6)} ms (median)`);
  console.log(`  page 50  ${deep.toFixed(2).padStart(6)} ms (median)`);
  console.log(`  ratio    ${ratio.toFixed(2)}x (target <= ${TARGET}x): ${ratio <= TARGET ? 'OK' : 'ABOVE TARGET'}`);
} finally {
  await svc.stop();
}
