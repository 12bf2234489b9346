// Signing per Standard Webhooks (standardwebhooks.com), which Svix-compatible verifiers
// check: the secret is `whsec_` and the base64 of its key bytes; a message is signed as
// `v1,` + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")), the
// timestamp in Unix seconds. Used by the service's webhook deliveries and `ferry listen`.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Key bytes of a new secret (the scheme allows 24 to 64). */
const SECRET_BYTES = 32;

/** A new random signing secret, `whsec_…`. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The key bytes of a `whsec_…` secret (a bare base64 string is taken as it is). */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('The signing secret is empty.');
  return key;
}

/** `v1,<base64 signature>` of one message. */
export function signMessage(secret: string | Buffer, id: string, timestampSeconds: number, body: string | Buffer): string {
  const key = typeof secret === 'string' ? secretKey(secret) : secret;
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The three headers a receiver verifies: webhook-id, webhook-timestamp, webhook-signature. */
export function signatureHeaders(secret: string | Buffer, id: string, body: string | Buffer, now: Date = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signMessage(secret, id, timestamp, body),
  };
}
