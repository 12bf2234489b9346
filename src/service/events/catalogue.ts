// The event types the service records. Public names and payloads follow the public API's
// event catalogue; ferry's own, for what the catalogue has no name for, start with
// `ferry.` (docs/events.md).
import { DATA_TYPES } from '../../platforms/data-types.js';

const PUBLIC = [
  'company.created', 'company.deleted', 'company.product.added', 'company.product.removed',
  'connection.created', 'connection.connected', 'connection.failed', 'connection.disconnected', 'connection.reconnected', 'connection.deleted',
  'read.completed', 'read.completed.initial',
  'client.rateLimit.reached', 'client.rateLimit.reset',
] as const;

/** A data type's writes: `{dataType}.write.successful` and `.unsuccessful` for each pushable type. */
const WRITES = DATA_TYPES.filter((t) => t.pushable).flatMap((t) => [`${t.key}.write.successful`, `${t.key}.write.unsuccessful`]);

export const FERRY_EVENTS = {
  /** One data type of a company finished syncing (Complete). */
  dataTypeReadCompleted: 'ferry.read.dataType.completed',
  /** One data type of a company's sync ended in an error state. */
  dataTypeReadFailed: 'ferry.read.dataType.failed',
  /** A webhook consumer was disabled (a 410, or a day of failed deliveries). */
  webhookDisabled: 'ferry.webhook.disabled',
  /** Sent to one consumer on request (POST /webhooks/{id}/test). */
  webhookTest: 'ferry.webhook.test',
} as const;

export const EVENT_TYPES: readonly string[] = [...PUBLIC, ...WRITES, ...Object.values(FERRY_EVENTS)];

const known = new Set(EVENT_TYPES);

export function isEventType(name: string): boolean {
  return known.has(name);
}
