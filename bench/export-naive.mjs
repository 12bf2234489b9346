// The naive export the export bench compares `ferry export` with: fetch every page
// (pageSize=5000 unless given, following _links.next), collect all records in one array,
// then write the file once with JSON.stringify per line. Run as its own process by
// bench/export.mjs, and by bench/remote.mjs at the page size it compares with.
// Usage: FERRY_API_KEY=… node bench/export-naive.mjs BASE_URL COMPANY_ID OUT [PAGE_SIZE]
import { writeFileSync } from 'node:fs';

const [baseUrl, companyId, out, pageSize = '5000'] = process.argv.slice(2);
const headers = { authorization: `Basic ${Buffer.from(process.env.FERRY_API_KEY ?? '').toString('base64')}` };
const all = [];
let next = `/companies/${companyId}/data/invoices?pageSize=${pageSize}`;
while (next) {
  const response = await fetch(baseUrl + next, { headers });
  if (response.status !== 200) throw new Error(`${next}: HTTP ${response.status} ${await response.text()}`);
  const page = await response.json();
  all.push(...page.results);
  next = page._links.next?.href;
}
writeFileSync(out, all.map((record) => `${JSON.stringify(record)}\n`).join(''));
