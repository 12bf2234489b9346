// Whether the tests' PostgreSQL answers (127.0.0.1:5432, user postgres, trust auth; or
// FERRY_TEST_POSTGRES_URL), and why not: asked by the test files that need it
// (postgres.ts) and by vitest.config.ts, which leaves the postgres project out when it does
// not answer, except on CI. No vitest import, so the config can load it.
import { Client } from 'pg';
import { parseTarget, unavailable } from '../../src/service/store/pg/unavailable.js';

/** An administrative connection: databases are created and dropped through it. */
export const POSTGRES_ADMIN_URL = process.env.FERRY_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const PROBE_TIMEOUT_MS = 3_000;

/** Whether this run is CI's: CI set, and not to false. */
export const onCi = (process.env.CI ?? '') !== '' && !['false', '0'].includes(process.env.CI!.toLowerCase());

export interface Probe {
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

export async function probePostgres(): Promise<Probe> {
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
