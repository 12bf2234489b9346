// The body of POST /webhooks, checked: every problem is a validation item naming its field,
// and the message says them all, so a client fixes the request in one go. The url must be
// one the target policy lets deliveries reach (target-policy.ts). `companyId` is the body's
// field until late 2024 (the earlier platform SDK sends it): the consumer gets that company's
// events only. Any other field is refused, so no consumer gets more than it asked for.
import { errors, type ValidationItem } from '../errors.js';
import { EVENT_TYPES, isEventType } from '../events/catalogue.js';
import { unknownFieldItems } from '../http/known-fields.js';
import type { TargetPolicy } from './target-policy.js';

export const MAX_URL_LENGTH = 2048;
export const MAX_COMPANY_TAGS = 10;
export const MAX_COMPANY_TAG_LENGTH = 128;

export interface ConsumerInput {
  url: string;
  eventTypes: string[];
  /** `key:value` tags; null for every company. */
  companyTags: string[] | null;
  /** The one company whose events it gets (checked to be the account's when it is created); null for every company. */
  companyId: string | null;
  /** The legacy rule type of a consumer made through /rules. */
  ruleType: string | null;
  disabled: boolean;
}

const CONSUMER_FIELDS = ['url', 'eventTypes', 'companyTags', 'companyId', 'disabled'];

/** Why the service refuses to deliver to `url` (`urlRefusal`'s reason), and what to do instead. */
export function targetProblem(url: URL, targets: TargetPolicy): string | undefined {
  const refusal = targets.urlRefusal(url);
  if (!refusal) return undefined;
  return `url must reach a public address: ${refusal}. To receive events on your own machine, run \`ferry listen --forward-to URL\`; `
    + 'the operator of this service can allow private targets (ferry serve --webhook-allow-private, or --webhook-allow HOST[:PORT]).';
}

/** Why `value` cannot be a receiver's URL (its item names the field the caller says). */
export function urlProblem(value: unknown, targets: TargetPolicy): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return 'url is required: the receiver\'s absolute http(s) URL.';
  if (value.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute http(s) URL.';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be an http or https URL.';
  // Receivers check the signature instead; credentials here would be shown in every listing.
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials (user:password@).';
  return targetProblem(url, targets);
}

/** A company id given in a body: a non-empty string, or the problem's message. */
export function companyIdProblem(value: unknown): string | undefined {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() !== '') ? undefined : 'companyId must be the id of one of the account\'s companies.';
}

export function parseConsumerInput(body: Record<string, unknown>, targets: TargetPolicy): ConsumerInput {
  const items: ValidationItem[] = unknownFieldItems(body, CONSUMER_FIELDS);
  const problem = (itemId: string, message: string) => items.push({ itemId, message, validatorName: 'WebhookConsumer' });

  const badUrl = urlProblem(body.url, targets);
  if (badUrl) problem('url', badUrl);

  let eventTypes: string[] = [];
  if (!Array.isArray(body.eventTypes) || body.eventTypes.length === 0 || !body.eventTypes.every((t) => typeof t === 'string')) {
    problem('eventTypes', 'eventTypes is required: a non-empty list of event type names.');
  } else {
    eventTypes = [...new Set(body.eventTypes as string[])];
    const unknown = eventTypes.filter((t) => !isEventType(t));
    if (unknown.length > 0) {
      problem('eventTypes', `Unknown event type${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}. Valid event types: ${EVENT_TYPES.join(', ')}.`);
    }
  }

  let companyTags: string[] | null = null;
  if (body.companyTags !== undefined && body.companyTags !== null) {
    const tags = body.companyTags;
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) problem('companyTags', 'companyTags must be a list of key:value strings.');
    else if (tags.length > MAX_COMPANY_TAGS) problem('companyTags', `companyTags may hold at most ${MAX_COMPANY_TAGS} tags.`);
    else if (tags.some((t) => t.length > MAX_COMPANY_TAG_LENGTH)) problem('companyTags', `Each of companyTags must be at most ${MAX_COMPANY_TAG_LENGTH} characters.`);
    else if (tags.some((t) => t.indexOf(':') < 1)) problem('companyTags', 'Each of companyTags must be key:value, as a company\'s tag key and value.');
    else companyTags = [...new Set(tags as string[])];
  }

  if (body.disabled !== undefined && body.disabled !== null && typeof body.disabled !== 'boolean') problem('disabled', 'disabled must be true or false.');
  const badCompany = companyIdProblem(body.companyId);
  if (badCompany) problem('companyId', badCompany);

  if (items.length > 0) throw errors.invalidWebhookConsumer(items);
  const companyId = typeof body.companyId === 'string' ? body.companyId : null;
  return { url: body.url as string, eventTypes, companyTags, companyId, ruleType: null, disabled: body.disabled === true };
}
