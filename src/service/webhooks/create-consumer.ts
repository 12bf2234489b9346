// Making a webhook consumer, as POST /webhooks and the legacy POST /rules both do: within
// the account's limit, bound to one of its companies if the body names one, with a signing
// secret answered this once and kept sealed with the consumer id bound in.
import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { errors, type ApiError, type ValidationItem } from '../errors.js';
import type { ConsumerRow } from '../store/events.js';
import type { ConsumerInput } from './consumer-input.js';
import { newConsumerSecret } from './sign.js';

/** As the public API: an account has at most 50 consumers. */
export const MAX_CONSUMERS = 50;

/**
 * Stores a new consumer of the account `clientId`; `invalid` words a company that is not the
 * account's (with the validation item naming `companyField`).
 */
export async function createConsumer(
  ctx: ServiceContext, clientId: string, input: ConsumerInput, invalid: (validation: ValidationItem[]) => ApiError, companyField = 'companyId',
): Promise<{ row: ConsumerRow; secret: string }> {
  const id = randomUUID();
  const secret = newConsumerSecret();
  const row: ConsumerRow = {
    id, client_id: clientId, url: input.url, event_types: JSON.stringify(input.eventTypes),
    company_tags: input.companyTags === null ? null : JSON.stringify(input.companyTags), company_id: input.companyId, rule_type: input.ruleType,
    disabled: input.disabled ? 1 : 0, disabled_reason: null, secret: ctx.sealer.seal(secret, id), created: isoSeconds(ctx.clock.now()),
  };
  // Count and insert together, so concurrent creates cannot pass the limit; the company is read in the same transaction.
  await ctx.store.transaction(async (tx) => {
    if (input.companyId !== null) {
      const company = await tx.getCompany(input.companyId);
      if (!company || company.client_id !== clientId) {
        throw invalid([{ itemId: companyField, message: `${companyField} ${input.companyId} is not a company of this account.`, validatorName: 'WebhookConsumer' }]);
      }
    }
    if ((await tx.listConsumers(clientId)).length >= MAX_CONSUMERS) {
      throw errors.tooManyConsumers(MAX_CONSUMERS);
    }
    await tx.insertConsumer(row);
  });
  return { row, secret };
}
