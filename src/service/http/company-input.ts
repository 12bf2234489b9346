// Company payload rules: names keep letters, digits, spaces and - ' & @ . , ? ! only, and
// one with an invisible format character is refused; at most 10 tags, keys 1–27 characters, values up to 100 (platforms/limits.ts).
import { formatCharacterProblem, MAX_COMPANY_DESCRIPTION, MAX_COMPANY_NAME, MAX_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE } from '../../platforms/limits.js';
import { errors, type ValidationItem } from '../errors.js';
import type { CompanyInput } from '../store/companies.js';
import { failIfAny } from './body.js';
import { refuseUnknownFields } from './known-fields.js';

/**
 * What a company body may hold; `groups` is the earlier platform SDK's (company groups are
 * outside ferry's scope): an empty list is taken, a group to join is refused, not dropped.
 */
const COMPANY_FIELDS = ['name', 'description', 'tags', 'groups'];

function checkGroups(groups: unknown, items: ValidationItem[]): void {
  if (groups === undefined || groups === null || (Array.isArray(groups) && groups.length === 0)) return;
  items.push({ itemId: 'groups', message: 'Company groups are outside this service\'s scope: leave groups out (or empty).', validatorName: 'CompanyGroups' });
}

const NAME_DISALLOWED = /[^\p{L}\p{N} \-'&@.,?!]/gu;

export function sanitizeCompanyName(name: string): string {
  return name.replace(NAME_DISALLOWED, '').replace(/\s+/g, ' ').trim();
}

function validateTags(tags: unknown, items: ValidationItem[]): Record<string, string> {
  if (tags === undefined || tags === null) return {};
  if (typeof tags !== 'object' || Array.isArray(tags)) {
    items.push({ itemId: 'tags', message: 'tags must be an object of string values.', validatorName: 'CompanyTags' });
    return {};
  }
  const entries = Object.entries(tags as Record<string, unknown>);
  if (entries.length > MAX_TAGS) {
    items.push({ itemId: 'tags', message: `At most ${MAX_TAGS} tags are allowed; ${entries.length} were given.`, validatorName: 'CompanyTags' });
  }
  // No prototype, so a tag named __proto__ is stored like any other instead of silently dropped.
  const clean = Object.create(null) as Record<string, string>;
  for (const [key, value] of entries) {
    if (key.length < 1 || key.length > MAX_TAG_KEY) {
      items.push({ itemId: `tags.${key}`, message: `Tag keys must be 1 to ${MAX_TAG_KEY} characters long.`, validatorName: 'CompanyTags' });
    }
    if (typeof value !== 'string') {
      items.push({ itemId: `tags.${key}`, message: 'Tag values must be strings.', validatorName: 'CompanyTags' });
    } else if (value.length > MAX_TAG_VALUE) {
      items.push({ itemId: `tags.${key}`, message: `Tag values must be at most ${MAX_TAG_VALUE} characters long.`, validatorName: 'CompanyTags' });
    } else {
      clean[key] = value;
    }
  }
  return clean;
}

function validateName(name: unknown, items: ValidationItem[]): string {
  if (typeof name !== 'string') {
    items.push({ itemId: 'name', message: 'name is required and must be a string.', validatorName: 'CompanyName' });
    return '';
  }
  const clean = sanitizeCompanyName(name);
  // Refused, not removed with the other characters: a name that hides one was likely made to mislead.
  const hidden = formatCharacterProblem(name);
  if (hidden) {
    items.push({ itemId: 'name', message: `name ${hidden}.`, validatorName: 'CompanyName' });
  } else if (clean.length > MAX_COMPANY_NAME) {
    items.push({ itemId: 'name', message: `name must be at most ${MAX_COMPANY_NAME} characters long; it has ${clean.length}.`, validatorName: 'CompanyName' });
  } else if (clean === '') {
    items.push({ itemId: 'name', message: "name is empty once characters other than letters, digits, spaces and - ' & @ . , ? ! are removed.", validatorName: 'CompanyName' });
  }
  return clean;
}

function validateDescription(description: unknown, items: ValidationItem[]): string | undefined {
  if (description === undefined || description === null) return undefined;
  if (typeof description !== 'string' || description.length > MAX_COMPANY_DESCRIPTION) {
    items.push({ itemId: 'description', message: `description must be a string of at most ${MAX_COMPANY_DESCRIPTION} characters.`, validatorName: 'CompanyDescription' });
    return undefined;
  }
  return description === '' ? undefined : description;
}

/** A full company payload (POST, PUT). */
export function companyInput(body: Record<string, unknown>): CompanyInput {
  refuseUnknownFields(body, COMPANY_FIELDS);
  const items: ValidationItem[] = [];
  checkGroups(body.groups, items);
  const input: CompanyInput = {
    name: validateName(body.name, items),
    tags: validateTags(body.tags, items),
  };
  const description = validateDescription(body.description, items);
  if (description !== undefined) input.description = description;
  failIfAny(items, items.length === 1 && items[0]!.itemId === 'name' ? errors.invalidCompanyName : errors.invalidCompany);
  return input;
}

/** A partial payload (PATCH) merged over the current values. */
export function companyPatch(body: Record<string, unknown>, current: CompanyInput): CompanyInput {
  refuseUnknownFields(body, COMPANY_FIELDS);
  const items: ValidationItem[] = [];
  checkGroups(body.groups, items);
  const next: CompanyInput = { ...current };
  if ('name' in body) next.name = validateName(body.name, items);
  if ('tags' in body) next.tags = validateTags(body.tags, items);
  if ('description' in body) {
    const description = validateDescription(body.description, items);
    if (description === undefined) delete next.description;
    else next.description = description;
  }
  failIfAny(items, errors.invalidCompany);
  return next;
}
