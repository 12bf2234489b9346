// Checks every row before anything is written: required columns, the platform, the token
// fields against that integration's schema (platforms/token-fields.ts, the rule the
// service applies to PUT …/authorization: missing and unknown named), managed-only
// integrations, duplicate keys within the file and malformed tags. Each problem names
// the field; the caller adds the row number.
import { formatCharacterProblem, MAX_COMPANY_DESCRIPTION, MAX_COMPANY_NAME, MAX_TAGS as MAX_COMPANY_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE } from '../../platforms/limits.js';
import { tokenFieldProblems } from '../../platforms/token-fields.js';
import { ferryKey, keyHash } from './key.js';
import type { IntegrationInfo, RawRow, RowProblem, ValidRow } from './types.js';
import { BASE_COLUMNS } from './columns.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TAGS = MAX_COMPANY_TAGS - 1; // one of them is ferryKey
const BASE = new Set<string>(BASE_COLUMNS);

export interface ValidatorOptions {
  integrations: IntegrationInfo[];
  /** --platform: used when the file has no platformKey column (or the cell is empty). */
  defaultPlatform?: string;
  /** The support team's managed migration may authorize managed-only integrations. */
  allowManaged?: boolean;
}

export type Validated = { ok: true; row: ValidRow } | { ok: false; row: number; problems: RowProblem[]; partial: Partial<ValidRow> };

export function parseTags(text: string, problems: RowProblem[]): Record<string, string> {
  const tags: Record<string, string> = {};
  if (text.trim() === '') return tags;
  for (const pair of text.split(';')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = at < 0 ? pair.trim() : pair.slice(0, at).trim();
    const value = at < 0 ? '' : pair.slice(at + 1).trim();
    if (at < 1 || key === '') problems.push({ field: 'tags', message: `"${pair.trim()}" is not key=value (tags look like region=eu;tier=gold)` });
    else if (key.length > MAX_TAG_KEY) problems.push({ field: 'tags', message: `tag key "${key}" is longer than ${MAX_TAG_KEY} characters` });
    else if (value.length > MAX_TAG_VALUE) problems.push({ field: 'tags', message: `tag ${key} is longer than ${MAX_TAG_VALUE} characters` });
    else if (key === 'ferryKey') problems.push({ field: 'tags', message: 'ferryKey is set by ferry itself; use the externalId column for your own key' });
    else if (key in tags) problems.push({ field: 'tags', message: `tag ${key} is given twice` });
    else tags[key] = value;
  }
  if (Object.keys(tags).length > MAX_TAGS) problems.push({ field: 'tags', message: `at most ${MAX_TAGS} tags per row (a company holds 10, one is ferryKey)` });
  return tags;
}

export class RowValidator {
  private readonly integrations: Map<string, IntegrationInfo>;
  /** Key hash → the first row that used it. */
  private readonly seen = new Map<number, number>();

  constructor(private readonly options: ValidatorOptions) {
    this.integrations = new Map(options.integrations.map((i) => [i.key, i]));
  }

  validate(raw: RawRow): Validated {
    const v = raw.values;
    const problems: RowProblem[] = [];
    const text = (name: string) => (v[name] ?? '').trim();
    const platformKey = (text('platformKey') || this.options.defaultPlatform || '').toLowerCase();
    const partial: Partial<ValidRow> = { row: raw.row, platformKey };
    const externalId = text('externalId');
    const companyName = text('companyName');
    const companyId = text('companyId');
    const connectionId = text('connectionId');
    if (externalId) partial.externalId = externalId;
    if (companyName) partial.companyName = companyName;
    if (companyId) partial.companyId = companyId;

    if (!companyName && !companyId) problems.push({ field: 'companyName', message: 'companyName is required (or companyId of an existing company)' });
    if (companyId && !UUID.test(companyId)) problems.push({ field: 'companyId', message: `"${companyId}" is not a company id (a UUID)` });
    if (connectionId && !companyId) problems.push({ field: 'connectionId', message: 'connectionId needs the companyId of the company it belongs to' });
    if (connectionId && !UUID.test(connectionId)) problems.push({ field: 'connectionId', message: `"${connectionId}" is not a connection id (a UUID)` });

    const integration = this.integrations.get(platformKey);
    if (!platformKey) problems.push({ field: 'platformKey', message: 'platformKey is required (add the column, or give --platform KEY)' });
    else if (!integration) problems.push({ field: 'platformKey', message: `"${platformKey}" is not an integration key (see ferry integrations list)` });
    else if (integration.known === false) {
      problems.push({
        field: 'platformKey',
        message: `this ferry does not know the token fields of ${integration.name} (${platformKey}): name the file's token columns with --token-fields a,b,c, or update ferry`,
      });
    } else if (integration.migrationRoute === 'managed' && !this.options.allowManaged) {
      problems.push({ field: 'platformKey', message: `${integration.name} tokens are migrated by the support team: use ferry managed (see ferry managed init --help)` });
    }

    const tokens: Record<string, string> = {};
    if (integration && integration.known !== false) {
      // An empty cell is no value: a column the file has for other rows names nothing here.
      for (const [name, value] of Object.entries(v)) {
        const trimmed = value.trim();
        if (!BASE.has(name) && trimmed !== '') tokens[name] = trimmed;
      }
      problems.push(...tokenFieldProblems(integration.tokenFields, integration.name, tokens));
    }

    const tags = parseTags(text('tags'), problems);
    const description = text('description');
    if (companyName.length > MAX_COMPANY_NAME) problems.push({ field: 'companyName', message: `companyName is longer than ${MAX_COMPANY_NAME} characters (${companyName.length})` });
    const hidden = formatCharacterProblem(companyName);
    if (hidden) problems.push({ field: 'companyName', message: `companyName ${hidden}` });
    if (description.length > MAX_COMPANY_DESCRIPTION) problems.push({ field: 'description', message: `description is longer than ${MAX_COMPANY_DESCRIPTION} characters (${description.length})` });

    let key: string | undefined;
    if (platformKey && (externalId || companyName || companyId)) {
      key = ferryKey({ externalId, companyName, companyId, platformKey });
      const hash = keyHash(key);
      const first = this.seen.get(hash);
      if (first !== undefined) {
        const what = externalId ? `externalId ${externalId}` : companyId ? `companyId ${companyId} with ${platformKey}` : `companyName "${companyName}" with ${platformKey}`;
        problems.push({ field: externalId ? 'externalId' : companyId ? 'companyId' : 'companyName', message: `duplicate of row ${first}: ${what} appears twice (give each row its own externalId)` });
      } else {
        this.seen.set(hash, raw.row);
      }
    }

    if (problems.length > 0 || !key) return { ok: false, row: raw.row, problems, partial };
    const row: ValidRow = { row: raw.row, key, platformKey, tags, tokens };
    if (externalId) row.externalId = externalId;
    if (companyName) row.companyName = companyName;
    if (companyId) row.companyId = companyId;
    if (connectionId) row.connectionId = connectionId;
    if (description) row.description = description;
    return { ok: true, row };
  }
}
