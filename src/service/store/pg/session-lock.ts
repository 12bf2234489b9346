// Work that one ferry process at a time may do on a database (migrating the schema,
// creating the admin account): a session advisory lock held on one connection while the
// work runs (on that connection, or on others). The server lets it go if the connection
// dies, so a crashed process never leaves the others waiting.
import type { Client, Pool, PoolClient } from 'pg';

/** sha256('ferry.admin_account')'s first 8 bytes as a signed bigint (see MIGRATION_LOCK_KEY). */
export const ADMIN_LOCK_KEY = '886479138545480933';

/** Takes a Pool (one connection is borrowed for the work) or a connected Client. */
export async function withSessionLock<T>(db: Pool | Client, key: string, work: (client: Client | PoolClient) => Promise<T>): Promise<T> {
  const borrowed = 'totalCount' in db ? await db.connect() : undefined;
  const client: Client | PoolClient = borrowed ?? (db as Client);
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    try {
      return await work(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch((err: Error) => {
        broken = err;
      });
    }
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    // A connection that failed mid-run is closed rather than pooled: closing it also
    // releases the lock if the unlock did not get through.
    borrowed?.release(broken);
  }
}
