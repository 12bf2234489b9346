// Signing a delivery per Standard Webhooks (the scheme itself is lib/standard-webhooks.ts,
// shared with `ferry listen`): receivers verify with any Standard Webhooks or Svix library.
import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX, signatureHeaders } from '../../lib/standard-webhooks.js';

/** 24 bytes (192 bits): within the 24 to 64 the scheme allows. */
const CONSUMER_SECRET_BYTES = 24;

/** A consumer's new signing secret, `whsec_` and the base64 of its key bytes. */
export function newConsumerSecret(): string {
  return SECRET_PREFIX + randomBytes(CONSUMER_SECRET_BYTES).toString('base64');
}

/** webhook-id (the event's id, the same on every attempt and replay), webhook-timestamp (the attempt's), webhook-signature. */
export function deliveryHeaders(secret: string, eventId: string, at: Date, body: string): Record<string, string> {
  return signatureHeaders(secret, eventId, body, at);
}
