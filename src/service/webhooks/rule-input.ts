// The body of the legacy POST /rules (the public API's webhook interface before consumers,
// in its platform document until January 2025): a rule type, an optional company, and where
// to notify. A rule is made as a webhook consumer: its type names the events it gets, as the
// public API's migration guide maps each rule type to the events that replaced it, and a
// current event type name is taken as a rule of that one event.
import { DATA_TYPES } from '../../platforms/data-types.js';
import { errors, type ValidationItem } from '../errors.js';
import { isEventType } from '../events/catalogue.js';
import { unknownFieldItems } from '../http/known-fields.js';
import { companyIdProblem, urlProblem, type ConsumerInput } from './consumer-input.js';
import type { TargetPolicy } from './target-policy.js';

const PUSHABLE = DATA_TYPES.filter((t) => t.pushable).map((t) => t.key);

/** Each rule type as the legacy document spelled it, and the events that replaced it. */
const RULE_TYPES: Readonly<Record<string, readonly string[]>> = {
  DataConnectionStatusChanged: ['connection.created', 'connection.connected', 'connection.disconnected', 'connection.reconnected', 'connection.deleted'],
  'New company synchronised': ['read.completed.initial'],
  'Data sync completed': ['read.completed'],
  'Dataset data changed': ['read.completed'],
  'Data Sync Status Changed To Error': ['read.completed'],
  'Push Operation Status Changed': PUSHABLE.flatMap((t) => [`${t}.write.successful`, `${t}.write.unsuccessful`]),
  'Push Operation Timed Out': PUSHABLE.map((t) => `${t}.write.unsuccessful`),
  'Sync Connection Deleted': ['connection.deleted'],
  'Rate Limit Reached': ['client.rateLimit.reached'],
  'Rate Limit Reset': ['client.rateLimit.reset'],
};

/** Rule types of products outside ferry's scope, which it has no events for. */
const OTHER_PRODUCTS: Readonly<Record<string, string>> = {
  'Account Categories Updated': 'the lending product',
  'Sync Completed': 'the expenses product',
  'Sync Failed': 'the expenses product',
};

/** A type's spelling folded: case, spaces and punctuation aside (`Push Operation Status Changed()` is `PushOperationStatusChanged`). */
const fold = (type: string) => type.toLowerCase().replace(/[^a-z]/g, '');

/** The migration guide's names of the same types, folded, where they differ from the document's. */
const ALIASES: Readonly<Record<string, string>> = {
  newcompanysynchronized: 'New company synchronised',
  clientratelimitreached: 'Rate Limit Reached',
  clientratelimitreset: 'Rate Limit Reset',
};

const CANONICAL = new Map<string, string>([...Object.keys(RULE_TYPES).map((t) => [fold(t), t] as const), ...Object.entries(ALIASES)]);
const OTHER = new Map(Object.entries(OTHER_PRODUCTS).map(([t, product]) => [fold(t), product] as const));

/** Rule types that concern the account, not a company: they take no companyId. */
const ACCOUNT_TYPES = new Set(['Rate Limit Reached', 'Rate Limit Reset']);

function ruleType(type: unknown, problem: (itemId: string, message: string) => void): { name: string; events: readonly string[] } | undefined {
  if (typeof type !== 'string' || type.trim() === '') {
    problem('type', 'type is required: the rule type, such as DataConnectionStatusChanged.');
    return undefined;
  }
  if (isEventType(type)) return { name: type, events: [type] };
  const name = CANONICAL.get(fold(type));
  if (name) return { name, events: RULE_TYPES[name]! };
  const product = OTHER.get(fold(type));
  problem('type', product
    ? `${type} is a rule of ${product}, which is outside this service's scope.`
    : `Unknown rule type ${type}. Rule types: ${Object.keys(RULE_TYPES).join(', ')}; or an event type (GET /events/types).`);
  return undefined;
}

/** The consumer a rule is made as. */
export function parseRuleInput(body: Record<string, unknown>, targets: TargetPolicy): ConsumerInput {
  const items: ValidationItem[] = unknownFieldItems(body, ['type', 'companyId', 'notifiers']);
  const problem = (itemId: string, message: string) => items.push({ itemId, message, validatorName: 'WebhookRule' });
  const type = ruleType(body.type, problem);
  const badCompany = companyIdProblem(body.companyId);
  if (badCompany) problem('companyId', badCompany);
  else if (type && ACCOUNT_TYPES.has(type.name) && typeof body.companyId === 'string') {
    problem('companyId', `${type.name} concerns the account as a whole: such a rule takes no companyId.`);
  }
  const notifiers = body.notifiers;
  if (notifiers === null || typeof notifiers !== 'object' || Array.isArray(notifiers)) {
    problem('notifiers', 'notifiers is required: {"webhook": "https://…"}.');
  } else {
    const { emails, webhook } = notifiers as Record<string, unknown>;
    items.push(...unknownFieldItems(notifiers as Record<string, unknown>, ['emails', 'webhook'], 'notifiers.'));
    // Dropping an address would leave its owner waiting for mail that never comes.
    if (emails !== undefined && emails !== null && !(Array.isArray(emails) && emails.length === 0)) {
      problem('notifiers.emails', 'This service sends no email: give notifiers.webhook only, and leave emails out (or empty).');
    }
    const bad = urlProblem(webhook, targets);
    if (bad) problem('notifiers.webhook', bad.replace(/^url/, 'notifiers.webhook'));
  }
  if (items.length > 0 || !type) throw errors.invalidRule(items);
  const { webhook } = notifiers as { webhook: string };
  return { url: webhook, eventTypes: [...type.events], companyTags: null, companyId: typeof body.companyId === 'string' ? body.companyId : null, ruleType: type.name, disabled: false };
}
