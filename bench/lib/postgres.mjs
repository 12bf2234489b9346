// PostgreSQL for the benches: a database of a run's own (ferry_bench_<random>) on the
// machine's server (FERRY_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432),
// dropped when the bench is done with it, when it fails, or on Ctrl-C; and which stores a
// bench runs on (--store=sqlite|postgres|both, both by default: the figures side by side).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const adminUrl = process.env.FERRY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const STORES = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };
export const STORE_NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The stores named by --store= (default both), SQLite first. */
export function storesOption() {
  const arg = process.argv.find((a) => a.startsWith('--store='));
  const value = arg ? arg.slice('--store='.length) : 'both';
  if (!STORES[value]) throw new Error(`--store=${value}: expected sqlite, postgres or both`);
  return STORES[value];
}

async function onAdmin(sql) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Databases made and not dropped yet: an interrupted bench drops them on its way out. */
const live = new Set();
let interruptible = false;
function dropOnInterrupt() {
  if (interruptible) return;
  interruptible = true;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      process.stderr.write(`${signal}: dropping ${[...live].map((db) => db.name).join(', ') || 'no database'} (requests in flight meanwhile fail)\n`);
      void Promise.allSettled([...live].map((db) => db.drop())).then(() => process.exit(130));
    });
  }
}

/** A fresh, empty database: { name, url, drop() }. The service migrates it when it starts on it. */
export async function createBenchDatabase() {
  const name = `ferry_bench_${randomBytes(6).toString('hex')}`;
  await onAdmin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = {
    name,
    url: url.href,
    async drop() {
      if (!live.delete(database)) return;
      await onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
  live.add(database);
  dropOnInterrupt();
  return database;
}

/** `?` placeholders numbered for pg, so a bench writes one SQL text for both stores. */
export function numbered(sql) {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
