// The data dir is the owner's alone: 0700, every file in it 0600 (the databases with their
// WAL and shared-memory files, the admin key, the secret key), whatever the umask, and an
// older, looser dir is tightened at start with one notice.
import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack } from '../helpers/stack.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const dirs: string[] = [];

function newDir(): string {
  const dir = tempDir('ferry-modes-');
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function expectPrivate(dataDir: string): void {
  expect(mode(dataDir).toString(8)).toBe('700');
  const files = readdirSync(dataDir);
  for (const name of ['ferry.db', 'ferry.db-wal', 'ferry.db-shm', 'sandbox.db', 'sandbox.db-wal', 'admin.key', 'secret.key']) {
    expect(files).toContain(name);
  }
  for (const name of files) expect(`${name} ${mode(join(dataDir, name)).toString(8)}`).toBe(`${name} 600`);
}

describe('data dir permissions', () => {
  it('a new data dir is 0700 and every file in it 0600, under a permissive umask', async () => {
    const dataDir = join(newDir(), 'fresh');
    const previous = process.umask(0o022);
    const notices: string[] = [];
    try {
      const stack = await startTestStack('threads', { dataDir, rateLimit: 0, onNotice: (m) => notices.push(m) });
      try {
        expectPrivate(dataDir);
      } finally {
        await stack.close();
      }
    } finally {
      process.umask(previous);
    }
    expect(notices).toEqual([]);
  });

  it('an existing 0755 dir with 0644 files is tightened at start, and said so once', async () => {
    const dataDir = newDir();
    await (await startTestStack('threads', { dataDir, rateLimit: 0 })).close();
    chmodSync(dataDir, 0o755);
    for (const name of readdirSync(dataDir)) chmodSync(join(dataDir, name), 0o644);

    const notices: string[] = [];
    const stack = await startTestStack('threads', { dataDir, rateLimit: 0, onNotice: (m) => notices.push(m) });
    try {
      expectPrivate(dataDir);
    } finally {
      await stack.close();
    }
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(`tightened permissions in ${dataDir}`);

    const again: string[] = [];
    await (await startTestStack('threads', { dataDir, rateLimit: 0, onNotice: (m) => again.push(m) })).close();
    expect(again).toEqual([]);
  });

  it('the command line says so on stderr, once', async () => {
    const dataDir = newDir();
    chmodSync(dataDir, 0o755);
    const first = await ferry(['--data-dir', dataDir, 'integrations', 'list']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('tightened permissions');
    expect(mode(dataDir).toString(8)).toBe('700');
    const second = await ferry(['--data-dir', dataDir, 'integrations', 'list']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('tightened permissions');
  });
});
