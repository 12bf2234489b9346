// Signing a delivery per Standard Webhooks (lib/webhook-signature.ts, shared with
// `ferry listen`): receivers verify with any Standard Webhooks or Svix library.
import { newSigningSecret, signatureHeaders } from '../../lib/webhook-signature.js';

/** 24 bytes (192 bits): within the 24 to 64 the scheme allows. */
const CONSUMER_SECRET_BYTES = 24;

/** A consumer's new signing secret, `whsec_` and the base64 of its key bytes. */
export function newConsumerSecret(): string {
  return newSigningSecret(CONSUMER_SECRET_BYTES);
}

/** webhook-id (the event's id, the same on every attempt and replay), webhook-timestamp (the attempt's), webhook-signature. */
export function deliveryHeaders(secret: string, eventId: string, at: Date, body: string): Record<string, string> {
  return signatureHeaders(secret, eventId, body, at);
}
