// The store's schema migrations and the token sealer, on real SQLite files.
import Database from 'better-sqlite3';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyMigrations, listMigrations, openDatabase } from '../src/service/store/sqlite/db.js';
import { createSealer, loadSecretKey, parseSecretKey } from '../src/service/secrets.js';
import { tempDir } from './helpers/service.js';

describe('schema migrations', () => {
  it('applies every numbered file once, in order, and nothing on the next open', () => {
    const file = join(tempDir(), 'ferry.db');
    const db = openDatabase(file);
    const latest = listMigrations().at(-1)!.version;
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = new Database(file);
    expect(applyMigrations(again)).toBe(0);
    again.close();
  });

  it('applies only the files newer than the recorded version, each in a transaction', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'm'));
    writeFileSync(join(dir, 'm', '001_a.sql'), 'CREATE TABLE a (x);');
    writeFileSync(join(dir, 'm', '002_b.sql'), 'CREATE TABLE b (x);');
    const db = new Database(join(dir, 'x.db'));
    expect(applyMigrations(db, join(dir, 'm'))).toBe(2);
    writeFileSync(join(dir, 'm', '003_bad.sql'), 'CREATE TABLE c (x); THIS IS NOT SQL;');
    expect(() => applyMigrations(db, join(dir, 'm'))).toThrow();
    // The failed file left nothing behind and the version did not move.
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'c'").get()).toEqual({ n: 0 });
  });
});

describe('token sealing', () => {
  it('creates secret.key 0600 once and reuses it', () => {
    const dir = tempDir();
    const key = loadSecretKey(dir, {});
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(loadSecretKey(dir, {}).equals(key)).toBe(true);
  });

  it('takes FERRY_SECRET_KEY as hex or base64, and refuses a wrong length', () => {
    const hex = 'ab'.repeat(32);
    expect(loadSecretKey(tempDir(), { FERRY_SECRET_KEY: hex }).toString('hex')).toBe(hex);
    expect(parseSecretKey(Buffer.alloc(32, 7).toString('base64')).equals(Buffer.alloc(32, 7))).toBe(true);
    expect(() => parseSecretKey('abcd')).toThrow(/32 bytes/);
  });

  it('round-trips, hides the plaintext, and binds the blob to its connection', () => {
    const sealer = createSealer(Buffer.alloc(32, 1));
    const tokens = { accessToken: 'at-secret-value', refreshToken: 'rt-secret-value' };
    const sealed = sealer.seal(tokens, 'connection-1');
    expect(sealed.toString('latin1')).not.toContain('secret-value');
    expect(sealer.open(sealed, 'connection-1')).toEqual(tokens);
    expect(() => sealer.open(sealed, 'connection-2')).toThrow();
    expect(() => createSealer(Buffer.alloc(32, 2)).open(sealed, 'connection-1')).toThrow();
    expect(sealer.seal(tokens, 'connection-1').equals(sealed)).toBe(false);
  });
});
