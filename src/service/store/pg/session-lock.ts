// Work that one ferry process at a time may do on a database (creating the admin account):
// a session advisory lock held on a connection of its own while the work runs on others.
// The server lets it go if this process dies, so a crash never leaves the others waiting.
import type { Pool } from 'pg';

/** sha256('ferry.admin_account')'s first 8 bytes as a signed bigint (see MIGRATION_LOCK_KEY). */
export const ADMIN_LOCK_KEY = '886479138545480933';

export async function withSessionLock<T>(pool: Pool, key: string, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch((err: Error) => {
        broken = err;
      });
    }
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    // Closed rather than pooled after a failure: closing it also lets the lock go.
    client.release(broken);
  }
}
