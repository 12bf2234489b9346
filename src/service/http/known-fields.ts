// A field a write route does not take is refused with a 400 naming it, never dropped: a
// request whose field is dropped may do more than its sender meant (a consumer meant for one
// company that receives every company's events). Fields older documents had are taken and
// honoured where ferry can, or named in docs/api.md as ignored.
import { errors, type ValidationItem } from '../errors.js';
import { failIfAny } from './body.js';

/** One validation item per field of `body` outside `known`; `at` prefixes nested objects' names (`settings[0].`). */
export function unknownFieldItems(body: Record<string, unknown>, known: readonly string[], at = ''): ValidationItem[] {
  const takes = known.length > 0 ? `it takes ${known.join(', ')}` : 'it takes no body';
  return Object.keys(body).filter((field) => !known.includes(field)).map((field) => ({
    itemId: `${at}${field}`, message: `${at}${field} is not a field this request takes (${takes}).`, validatorName: 'RequestFields',
  }));
}

/** Throws the 400 naming every field of `body` outside `known`. */
export function refuseUnknownFields(body: Record<string, unknown>, known: readonly string[], at = ''): void {
  failIfAny(unknownFieldItems(body, known, at), errors.unknownFields);
}
