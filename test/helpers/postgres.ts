// Tests against a real PostgreSQL (127.0.0.1:5432, user postgres, trust auth; or
// FERRY_TEST_POSTGRES_URL). Each test file owns its databases: freshDatabase() makes one
// with a name of its own and the suite drops it when its tests are done. Where PostgreSQL
// is not reachable, describePostgres skips its suites with one line saying so, except on
// CI (CI set), where the suite fails: CI never passes by skipping them.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it, type RunnerTask, type SuiteCollector } from 'vitest';
import { parseTarget, unavailable } from '../../src/service/store/pg/unavailable.js';

/** An administrative connection: databases are created and dropped through it. */
export const POSTGRES_ADMIN_URL = process.env.FERRY_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const PROBE_TIMEOUT_MS = 3_000;

/** Whether this run is CI's: CI set, and not to false. */
export const onCi = (process.env.CI ?? '') !== '' && !['false', '0'].includes(process.env.CI!.toLowerCase());

interface Probe {
  ok: boolean;
  /** Why not, e.g. "PostgreSQL is not reachable at 127.0.0.1:5432 (connection refused)". */
  reason: string;
}

function hostPort(url: string): string {
  try {
    const { host, port } = parseTarget(url);
    return `${host}:${port}`;
  } catch {
    return 'FERRY_TEST_POSTGRES_URL (not a postgres:// URL)';
  }
}

async function probe(): Promise<Probe> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: PROBE_TIMEOUT_MS, application_name: 'ferry-test' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true, reason: '' };
  } catch (err) {
    let cause: string;
    try {
      // The store's own wording of the cause, without its "cannot connect to … at …:" lead.
      cause = unavailable(err, parseTarget(POSTGRES_ADMIN_URL), PROBE_TIMEOUT_MS).message.replace(/^.*?: /, '');
    } catch {
      cause = 'not a postgres:// URL';
    }
    return { ok: false, reason: `PostgreSQL is not reachable at ${hostPort(POSTGRES_ADMIN_URL)} (${cause})` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

let probed: Promise<Probe> | undefined;

/** Whether PostgreSQL answers at POSTGRES_ADMIN_URL; asked once per test file. */
export async function postgresAvailable(): Promise<boolean> {
  probed ??= probe();
  return (await probed).ok;
}

// Known before any suite is declared, so describePostgres can choose synchronously.
const reachability = await (probed ??= probe());

const skippedSuites: SuiteCollector[] = [];

/** The databases of the describePostgres suites running now, innermost last (they may nest). */
const running: string[][] = [];

function countTests(task: RunnerTask | undefined): number {
  if (!task) return 0;
  return task.type === 'suite' ? task.tasks.reduce((n, child) => n + countTests(child), 0) : 1;
}

/** One line per test file, however many suites it skips, once they are all collected. */
function reportSkipped(): void {
  const total = skippedSuites.reduce((n, collector) => n + countTests(collector.suite), 0);
  process.stderr.write(`${reachability.reason}: ${total} PostgreSQL test${total === 1 ? '' : 's'} skipped; CI fails instead\n`);
}

/**
 * A suite that needs PostgreSQL. Reachable: it runs, and drops the databases its tests
 * made with freshDatabase() when they are done. Not reachable: skipped with a reason, or,
 * on CI, failed with it.
 */
export function describePostgres(name: string, fn: () => void): void {
  if (reachability.ok) {
    describe(name, () => {
      // Registered before fn's hooks: this beforeAll runs first and this afterAll last.
      const mine: string[] = [];
      beforeAll(() => {
        running.push(mine);
      });
      afterAll(async () => {
        running.splice(running.indexOf(mine), 1);
        await dropDatabases(mine);
      });
      fn();
    });
    return;
  }
  if (onCi) {
    describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(`${reachability.reason}. CI runs every PostgreSQL test: start PostgreSQL, or set FERRY_TEST_POSTGRES_URL.`);
      });
    });
    return;
  }
  skippedSuites.push(describe.skip(name, fn));
  // Collection of the file's suites ends before the next turn of the event loop.
  if (skippedSuites.length === 1) setTimeout(reportSkipped, 0);
}

async function admin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL, application_name: 'ferry-test' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function dropDatabases(names: string[]): Promise<void> {
  if (names.length === 0) return;
  await admin(async (client) => {
    for (const name of names.splice(0)) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/** The admin URL with another database in its path. */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * Creates an empty database for the calling test file (ferry_test_<pid>_<random>) and
 * returns its URL. Call it inside a describePostgres suite (in a test or a hook): the suite
 * drops the database, WITH (FORCE), after its tests.
 */
export async function freshDatabase(): Promise<string> {
  const list = running.at(-1);
  if (!list) throw new Error('freshDatabase() is for tests inside describePostgres(...).');
  const name = `ferry_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  list.push(name);
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  return databaseUrl(name);
}
