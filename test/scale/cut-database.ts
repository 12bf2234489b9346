// The database going away and coming back, as its server would: closed to new connections
// and those open ended, then open again. Only the named database is touched.
import { Client } from 'pg';
import { POSTGRES_ADMIN_URL } from '../helpers/postgres.js';

export async function cutDatabase(name: string, open: boolean): Promise<void> {
  const admin = new Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS ${open ? 'true' : 'false'}`);
    if (!open) await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  } finally {
    await admin.end();
  }
}
