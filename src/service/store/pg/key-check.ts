// Every process on one PostgreSQL database seals tokens with the same key (010_key_check.sql):
// the first to start records its key's check value, and a process whose key differs is
// refused before it seals a token the others could not open.
import type { Pool } from 'pg';
import { SecretKeyError } from '../../secrets.js';
import { describeTarget, parseTarget } from './unavailable.js';

export async function checkSharedKey(pool: Pool, database: string, value: string): Promise<void> {
  await pool.query('INSERT INTO key_check (id, value) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [value]);
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM key_check WHERE id = 1');
  if (rows[0]?.value === value) return;
  throw new SecretKeyError(
    `the database at ${describeTarget(parseTarget(database))} holds tokens sealed with another token-encryption key than this process's. ` +
    'Give every ferry process on one database the same key: --secret-key-file PATH or FERRY_SECRET_KEY (a copy of the first one\'s <data-dir>/secret.key).',
    'conflict',
  );
}
