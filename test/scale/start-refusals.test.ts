// What `ferry serve --database` and `ferry worker` say when they cannot start: one line
// naming where and why (never the URL's password), a hint, no stack trace, and the exit
// code of docs/cli.md. Run in this process, as the binary runs them (runCli).
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { reservePort } from '../helpers/processes.js';
import { tempDir } from '../helpers/service.js';

describe('refused starts on PostgreSQL', () => {
  const root = tempDir('ferry-refusals-');

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('an unreachable database: one line naming host, port and database, and the cause; exit 1', async () => {
    const port = await reservePort();
    for (const [args, env] of [
      [['serve', '--port', '0', '--database', `postgres://ferry:s3cret-pw@127.0.0.1:${port}/ferry`], {}],
      [['serve', '--port', '0'], { FERRY_DATABASE_URL: `postgres://ferry:s3cret-pw@127.0.0.1:${port}/ferry` }],
    ] as const) {
      const result = await ferry([...args, '--data-dir', join(root, 'api')], { env: { ...env } });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error: cannot connect to PostgreSQL at 127.0.0.1:${port}/ferry: connection refused\n` +
        'hint: Check the database URL (--database or FERRY_DATABASE_URL) and that PostgreSQL is running and reachable from here.\n',
      );
      expect(result.stdout).toBe('');
    }
  });

  it('--no-worker on SQLite is refused: nothing else could run the background work', async () => {
    const result = await ferry(['serve', '--port', '0', '--no-worker', '--data-dir', join(root, 'sqlite')], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: --no-worker needs a PostgreSQL database (--database or FERRY_DATABASE_URL).\n' +
      'hint: On SQLite no other process can run the syncs, pushes and webhook deliveries: leave --no-worker out.\n');
  });

  it('a worker without a database, a sandbox URL or the shared key says which, and what to do', async () => {
    const noDatabase = await ferry(['worker', '--sandbox-url', 'http://127.0.0.1:9'], { env: {} });
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toMatch(/^error: ferry worker needs the PostgreSQL database the API instances use\.\nhint: Give --database postgres:\/\/user@host:5432\/db or set FERRY_DATABASE_URL/);

    const noSandbox = await ferry(['worker', '--database', 'postgres://127.0.0.1:9/x'], { env: {} });
    expect(noSandbox.code).toBe(2);
    expect(noSandbox.stderr).toMatch(/^error: ferry worker needs the platforms to sync from: give --sandbox-url URL/);

    const noKey = await ferry(['worker', '--database', 'postgres://127.0.0.1:9/x', '--sandbox-url', 'http://127.0.0.1:9', '--data-dir', join(root, 'worker')], { env: {} });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toBe('error: a worker needs the token-encryption key the API instances use: give --secret-key-file PATH or set FERRY_SECRET_KEY.\n');

    const keyFile = join(root, 'secret.key');
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const port = await reservePort();
    const unreachable = await ferry(['worker', '--database', `postgres://127.0.0.1:${port}/x`, '--sandbox-url', 'http://127.0.0.1:9', '--secret-key-file', keyFile, '--data-dir', join(root, 'worker')], { env: {} });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.split('\n')[0]).toBe(`error: cannot connect to PostgreSQL at 127.0.0.1:${port}/x: connection refused`);
  });
});
