// Tokens at rest: AES-256-GCM with a random 96-bit IV per seal. The key comes, first found,
// from a key file (`ferry serve --secret-key-file`), FERRY_SECRET_KEY or <data-dir>/secret.key,
// the last created 0600 on first start (and never beside a database that has none: its
// tokens would not open); the first two take 64 hex chars or base64 of 32
// bytes. The connection id is bound in as associated data, so a sealed blob copied onto
// another connection's row does not open.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_FORMAT = 'must be 32 bytes, as 64 hex characters or base64';

export interface Sealer {
  seal(value: unknown, associatedData: string): Buffer;
  open<T>(sealed: Buffer, associatedData: string): T;
}

/**
 * Why no key could be settled on. `conflict`: two sources hold different keys; `unusable`:
 * a source cannot be read or holds no key. The message names the source, never a key.
 */
export class SecretKeyError extends Error {
  constructor(message: string, readonly kind: 'conflict' | 'unusable') {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/**
 * What processes sharing a database compare to know they seal with one key: an HMAC of a
 * fixed text under the key, from which the key cannot be got back.
 */
export function keyCheckValue(key: Buffer): string {
  return createHmac('sha256', key).update('ferry: one token-encryption key per database').digest('hex');
}

export interface SecretKeySources {
  /** A file holding the key, ahead of FERRY_SECRET_KEY; nothing is written into the data dir then. */
  keyFile?: string;
  /** Told once when the key file is readable by group or others (it is still used). */
  onNotice?: (message: string) => void;
}

export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) throw new Error(`The secret key ${KEY_FORMAT}.`);
  return key;
}

export function loadSecretKey(dataDir: string, env: NodeJS.ProcessEnv = process.env, sources: SecretKeySources = {}): Buffer {
  const fromEnv = env.FERRY_SECRET_KEY ? keyOf('FERRY_SECRET_KEY', env.FERRY_SECRET_KEY) : undefined;
  const file = join(dataDir, 'secret.key');
  if (sources.keyFile !== undefined) {
    const key = readKeyFile(sources.keyFile, sources.onNotice);
    if (fromEnv && !fromEnv.equals(key)) {
      throw new SecretKeyError(`--secret-key-file ${sources.keyFile} and FERRY_SECRET_KEY hold different keys; give one of them, or the same key in both.`, 'conflict');
    }
    // Tokens sealed under the data dir's own key would no longer open: refuse rather than lose them.
    if (existsSync(file) && !readKeyFile(file).equals(key)) {
      throw new SecretKeyError(
        `${file} holds a different key than --secret-key-file ${sources.keyFile}; tokens sealed with it would not open. ` +
        `Give --secret-key-file ${file} (or copy that file to ${sources.keyFile}), or remove ${file} if the database holds no tokens.`,
        'unusable',
      );
    }
    return key;
  }
  if (fromEnv) return fromEnv;
  if (existsSync(file)) return parseSecretKey(readFileSync(file, 'utf8'));
  // A database without its key: restored from a backup without the key, or the key removed.
  // A new key would open none of its tokens, and nothing would say so until they were used.
  if (existsSync(join(dataDir, 'ferry.db'))) {
    throw new SecretKeyError(
      `${join(dataDir, 'ferry.db')} is there but ${file} is not: the database's tokens were sealed with a key this data dir no longer holds. ` +
      `Put that key back as ${file} (from where it was kept with the backups), or give it with --secret-key-file PATH or FERRY_SECRET_KEY.`,
      'unusable',
    );
  }
  const key = randomBytes(32);
  // 'wx' fails if another process created it first; then read theirs.
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch {
    return parseSecretKey(readFileSync(file, 'utf8'));
  }
}

/** A key from `source`'s text, or an error naming the source (never the text). */
function keyOf(source: string, text: string): Buffer {
  try {
    return parseSecretKey(text);
  } catch {
    throw new SecretKeyError(`${source} does not hold a usable key: it ${KEY_FORMAT} (surrounding whitespace is ignored).`, 'unusable');
  }
}

function readKeyFile(path: string, onNotice?: (message: string) => void): Buffer {
  let text: string;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SecretKeyError(`cannot read the secret key file ${path}: ${readFailure(err)}.`, 'unusable');
  }
  // As ssh does with a private key: say so, but use it (the file may be shared by design).
  if (mode & 0o077) onNotice?.(`the secret key file ${path} is accessible by group or others (mode ${mode.toString(8).padStart(4, '0')}); chmod 600 it`);
  return keyOf(`the secret key file ${path}`, text);
}

function readFailure(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT': return 'no such file';
    case 'EACCES': case 'EPERM': return 'permission denied';
    case 'EISDIR': return 'it is a directory';
    default: return (err as NodeJS.ErrnoException).code ?? 'unreadable';
  }
}

export function createSealer(key: Buffer): Sealer {
  return {
    seal(value, associatedData) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(associatedData));
      const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed, associatedData) {
      const iv = sealed.subarray(0, IV_BYTES);
      const tag = sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(associatedData));
      decipher.setAuthTag(tag);
      const text = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      return JSON.parse(text);
    },
  };
}
