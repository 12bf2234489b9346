// Tests against a real PostgreSQL (127.0.0.1:5432, user postgres, trust auth; or
// FERRY_TEST_POSTGRES_URL). Each test file owns its databases: freshDatabase() makes one
// with a name of its own and the suite drops it when its tests are done. Where PostgreSQL
// is not reachable, describePostgres skips its suites with one line saying so, except on
// CI (CI set), where the suite fails: CI never passes by skipping them.
import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it, type RunnerTask, type SuiteCollector } from 'vitest';
import { listPgMigrations, migratePostgres } from '../../src/service/store/pg/migrate.js';
import { onCi, POSTGRES_ADMIN_URL, probePostgres, type Probe } from './postgres-probe.js';

export { onCi, POSTGRES_ADMIN_URL } from './postgres-probe.js';

let probed: Promise<Probe> | undefined;

/** Whether PostgreSQL answers at POSTGRES_ADMIN_URL; asked once per test file. */
export async function postgresAvailable(): Promise<boolean> {
  probed ??= probePostgres();
  return (await probed).ok;
}

// Known before any suite is declared, so describePostgres can choose synchronously.
const reachability = await (probed ??= probePostgres());

/**
 * For a test file run wholly on PostgreSQL (FERRY_TEST_STORE=postgres): where it is not
 * reachable, the file fails with the reason. (`npm test` leaves the postgres project out
 * then, saying so, except on CI: vitest.config.ts.)
 */
export function requirePostgres(): void {
  if (reachability.ok) return;
  beforeAll(() => {
    throw new Error(`${reachability.reason}. FERRY_TEST_STORE=postgres runs every service on PostgreSQL: start it, or set FERRY_TEST_POSTGRES_URL.`);
  });
}

const skippedSuites: SuiteCollector[] = [];

/** What a running describePostgres suite owns: its databases, the one its tests share, and what to close first. */
interface SuiteScope {
  databases: string[];
  shared?: Promise<string>;
  cleanups: Array<() => Promise<void>>;
}

/**
 * The describePostgres suites running now, innermost last (they may nest). Kept per suite,
 * not per module, so that helper modules shared by the files of one worker (the fast run
 * does not isolate files) hand each file databases of its own.
 */
const running: SuiteScope[] = [];

function innermost(what: string): SuiteScope {
  const scope = running.at(-1);
  if (!scope) throw new Error(`${what} is for tests inside describePostgres(...).`);
  return scope;
}

function countTests(task: RunnerTask | undefined): number {
  if (!task) return 0;
  return task.type === 'suite' ? task.tasks.reduce((n, child) => n + countTests(child), 0) : 1;
}

/** One line per test file, however many suites it skips, once they are all collected. */
function reportSkipped(): void {
  const total = skippedSuites.splice(0).reduce((n, collector) => n + countTests(collector.suite), 0);
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
      const mine: SuiteScope = { databases: [], cleanups: [] };
      beforeAll(() => {
        running.push(mine);
      });
      afterAll(async () => {
        running.splice(running.indexOf(mine), 1);
        for (const cleanup of mine.cleanups.splice(0)) await cleanup();
        await dropDatabases(mine.databases);
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

/** How long a drop gives the connections of a database that are on their way out. */
const CLOSING_MS = 500;

/**
 * Drops the named databases (and empties the list), WITH (FORCE): connections left open do
 * not stop it. It first gives closing connections up to CLOSING_MS to go: pg's Pool.end()
 * resolves before its clients' sockets close, and a backend ended by FORCE sends such a
 * client a FATAL that a pool with no 'error' listener throws, uncaught, into whichever test
 * runs next.
 */
export async function dropDatabases(names: string[]): Promise<void> {
  if (names.length === 0) return;
  await admin(async (client) => {
    for (const name of names.splice(0)) {
      const deadline = Date.now() + CLOSING_MS;
      for (;;) {
        const { rowCount } = await client.query('SELECT 1 FROM pg_stat_activity WHERE datname = $1 LIMIT 1', [name]);
        if (!rowCount || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
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
  const scope = innermost('freshDatabase()');
  const name = testDatabaseName();
  scope.databases.push(name);
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  return databaseUrl(name);
}

/** One database for all the tests of the innermost describePostgres suite (made on first use, dropped with the suite). */
export function suiteDatabase(): Promise<string> {
  const scope = innermost('suiteDatabase()');
  scope.shared ??= freshDatabase();
  return scope.shared;
}

/** Runs `cleanup` when the innermost describePostgres suite ends, before its databases are dropped. */
export function atSuiteEnd(cleanup: () => Promise<void>): void {
  innermost('atSuiteEnd()').cleanups.push(cleanup);
}

function testDatabaseName(): string {
  return `ferry_test_${process.pid}_${randomBytes(6).toString('hex')}`;
}

/** pg_advisory_lock's key for building the template (on the admin database): sha256('ferry.test_template')'s first 8 bytes. */
const TEMPLATE_LOCK_KEY = BigInt.asIntN(64, createHash('sha256').update('ferry.test_template').digest().readBigUInt64BE(0)).toString();

let template: Promise<string> | undefined;

/**
 * The name of a database holding the schema every migration makes, which services' test
 * databases are copied from (CREATE DATABASE … TEMPLATE) instead of each running the
 * migrations. Its name carries a hash of the migrations, so a changed migration makes
 * another. Made once: the vitest workers that ask at the same time wait on an advisory
 * lock for the one building it, which builds it under a scratch name and renames it
 * when complete, so a build that dies half way is never used.
 */
export function migratedTemplate(): Promise<string> {
  template ??= admin(async (client) => {
    const hash = createHash('sha256');
    for (const migration of listPgMigrations()) hash.update(migration.name).update('\0').update(migration.sql).update('\0');
    const name = `ferry_test_template_${hash.digest('hex').slice(0, 12)}`;
    await client.query('SELECT pg_advisory_lock($1::bigint)', [TEMPLATE_LOCK_KEY]);
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rowCount) return name;
      const building = `${name}_building`;
      await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await client.query(`CREATE DATABASE "${building}"`);
      const target = new Client({ connectionString: databaseUrl(building), application_name: 'ferry-test' });
      target.on('error', () => undefined);
      await target.connect();
      try {
        await migratePostgres(target);
      } finally {
        await target.end();
      }
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
      // Copying needs it to have no connection, so it takes none.
      await client.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      return name;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [TEMPLATE_LOCK_KEY]);
    }
  });
  return template;
}

/**
 * A new database with every migration applied, copied from the template: its name, for
 * the caller to drop (dropDatabases) when done.
 */
export async function migratedDatabase(): Promise<string> {
  const source = await migratedTemplate();
  const name = testDatabaseName();
  await admin((client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${source}"`));
  return name;
}
