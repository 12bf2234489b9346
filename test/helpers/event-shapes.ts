// The shape of every event the tests see, checked against the public event catalogue: through
// the platform SDK's own models where it has one for the event (@codat/platform parses the
// payload as an integrator's code would), and against the fields the catalogue requires of
// the event, written here as the project's own data (the SDK's models leave most of them
// optional). ferry's own events (`ferry.`) are held to docs/events.md. No field of any event
// is null: a field with no value is left out.
import {
  clientRateLimitWebhookFromJSON, companyWebhookFromJSON, connectionWebhookFromJSON, dataTypeWriteWebhookFromJSON, readCompletedWebhookFromJSON,
} from '@codat/platform/sdk/models/shared/index.js';

export interface DeliveredEvent {
  id: string;
  eventType: string;
  generatedDate: string;
  payload: Record<string, unknown>;
}

type Parse = (json: string) => { ok: boolean; error?: unknown };

/** The catalogue's required fields (paths into the payload), and the SDK model that parses the event, by event type. */
interface Shape {
  required: string[];
  sdk?: Parse;
}

const CONNECTION_REQUIRED = ['id', 'integrationId', 'sourceId', 'platformName', 'linkUrl', 'status', 'created', 'sourceType'].map((f) => `connection.${f}`);

function shapeOf(eventType: string): Shape | undefined {
  if (eventType === 'company.created' || eventType === 'company.deleted') return { required: ['id', 'name', 'redirect'], sdk: companyWebhookFromJSON };
  if (eventType.startsWith('company.product.')) return { required: ['id', 'name', 'productId', 'productName', 'products'] };
  if (eventType.startsWith('connection.')) return { required: ['referenceCompany.id', 'referenceCompany.name', ...CONNECTION_REQUIRED], sdk: connectionWebhookFromJSON };
  if (eventType === 'read.completed' || eventType === 'read.completed.initial') return { required: ['referenceCompany.id', 'dataTypes'], sdk: readCompletedWebhookFromJSON };
  if (/\.write\.(successful|unsuccessful)$/.test(eventType)) {
    return { required: ['id', 'type', 'referenceCompany.id', 'connectionId', 'requestedOnDate', 'status'], sdk: dataTypeWriteWebhookFromJSON };
  }
  if (eventType.startsWith('client.rateLimit.')) return { required: ['dailyQuota', 'quotaRemaining', 'expiryDate'], sdk: clientRateLimitWebhookFromJSON };
  if (eventType.startsWith('ferry.read.dataType.')) return { required: ['referenceCompany.id', 'connectionId', 'dataType', 'pullOperationId', 'status', 'fetched'] };
  if (eventType === 'ferry.webhook.disabled') return { required: ['id', 'url', 'reason'] };
  if (eventType === 'ferry.webhook.test') return { required: ['id', 'message'] };
  return undefined;
}

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), value);
}

/** Paths of the null values in `value`. */
function nulls(value: unknown, path = 'payload'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nulls(v, `${path}[${i}]`));
  if (typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => nulls(v, `${path}.${k}`));
  return [];
}

/** What is wrong with an event's shape (empty when nothing is). */
export function eventShapeProblems(event: DeliveredEvent): string[] {
  const problems: string[] = [];
  for (const field of ['id', 'eventType', 'generatedDate'] as const) if (typeof event[field] !== 'string') problems.push(`${field} is not a string`);
  const shape = shapeOf(event.eventType);
  if (!shape) return [...problems, `${event.eventType} is not an event type of the catalogue`];
  if (event.payload === null || typeof event.payload !== 'object') return [...problems, 'payload is not an object'];
  for (const path of shape.required) if (at(event.payload, path) === undefined) problems.push(`payload lacks ${path}`);
  problems.push(...nulls(event.payload).map((path) => `${path} is null`));
  const parsed = shape.sdk?.(JSON.stringify(event));
  if (parsed && !parsed.ok) problems.push(`the platform SDK refuses it: ${String((parsed.error as Error | undefined)?.message ?? parsed.error)}`);
  return problems.map((p) => `${event.eventType} ${event.id}: ${p}`);
}

/** Throws naming every event of `events` whose shape is wrong. */
export function assertEventShapes(events: DeliveredEvent[]): void {
  const problems = events.flatMap(eventShapeProblems);
  if (problems.length > 0) throw new Error(`Events that do not match the catalogue:\n${problems.join('\n')}`);
}
