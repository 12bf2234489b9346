// The baseline of bench/migrate.mjs: what a client would write by hand. The same four
// calls per row (create company, create connection, authorize, queue a sync), one row at
// a time, with fetch (keep-alive). Usage: node migrate-plain.mjs BASE_URL API_KEY FILE.csv
import { readFileSync } from 'node:fs';

const [baseUrl, apiKey, file] = process.argv.slice(2);
const auth = `Basic ${Buffer.from(apiKey).toString('base64')}`;
const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
const columns = header.split(',');

async function call(method, path, body) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

for (const line of lines) {
  const cells = line.match(/("[^"]*"|[^,]*)(,|$)/g).map((c) => c.replace(/,$/, '').replace(/^"|"$/g, ''));
  const row = Object.fromEntries(columns.map((c, i) => [c, cells[i]]));
  const { companyName, externalId, platformKey, ...tokens } = row;
  const company = await call('POST', '/companies', { name: companyName, tags: { externalId } });
  const connection = await call('POST', `/companies/${company.id}/connections`, { platformKey });
  await call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, Object.fromEntries(Object.entries(tokens).filter(([, v]) => v)));
  await call('POST', `/companies/${company.id}/data/all`);
}
