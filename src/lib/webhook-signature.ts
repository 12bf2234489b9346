// The Standard Webhooks headers of one message (standardwebhooks.com), signed by the
// `standardwebhooks` package, the scheme's own library, which receivers verify with:
// webhook-id, webhook-timestamp (Unix seconds) and webhook-signature (`v1,` and the base64
// HMAC-SHA256 of "{id}.{timestamp}.{body}" under the key of a `whsec_…` secret). The
// service's webhook deliveries and `ferry listen` both sign here, so they sign alike.
import { randomBytes } from 'node:crypto';
import { Webhook, type WebhookUnbrandedRequiredHeaders } from 'standardwebhooks';

/** A new random signing secret: `whsec_` and the base64 of `bytes` key bytes (the scheme allows 24 to 64). */
export function newSigningSecret(bytes = 32): string {
  return `whsec_${randomBytes(bytes).toString('base64')}`;
}

/** The three headers a receiver verifies, for `body` sent as message `id` at `at`. */
export function signatureHeaders(secret: string, id: string, body: string, at: Date = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  } satisfies WebhookUnbrandedRequiredHeaders;
}
