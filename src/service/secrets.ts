// Tokens at rest: AES-256-GCM with a random 96-bit IV per seal. The key comes from
// FERRY_SECRET_KEY (64 hex chars or base64 of 32 bytes) or from <data-dir>/secret.key,
// created 0600 on first start. The connection id is bound in as associated data, so a
// sealed blob copied onto another connection's row does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealer {
  seal(value: unknown, associatedData: string): Buffer;
  open<T>(sealed: Buffer, associatedData: string): T;
}

export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('The secret key must be 32 bytes, as 64 hex characters or base64.');
  return key;
}

export function loadSecretKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  if (env.FERRY_SECRET_KEY) return parseSecretKey(env.FERRY_SECRET_KEY);
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return parseSecretKey(readFileSync(file, 'utf8'));
  const key = randomBytes(32);
  // 'wx' fails if another process created it first; then read theirs.
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch {
    return parseSecretKey(readFileSync(file, 'utf8'));
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
