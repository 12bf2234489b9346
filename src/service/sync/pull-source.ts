// What a pull reads from the platform and how each record is stored. A standard data type
// is read as itself, with the account's supplemental fields (if configured for that
// platform and type) added under supplementalData.content. A custom data type
// (`custom/{identifier}`) reads the platform data type its configuration names and stores
// only the configured fields, keyed by its keyBy fields.
import { isoSeconds, type Clock } from '../../lib/clock.js';
import { integrationByKey } from '../../platforms/registry.js';
import { parseSourcePath, readPath } from '../data-configs/source-path.js';
import { customSource, type CustomDataTypeConfig, type SupplementalConfig } from '../data-configs/validate-config.js';
import type { RecordInput } from '../store/datasets.js';
import type { ConfigKind } from '../store/data-configs.js';

type Json = Record<string, unknown>;
type Steps = Array<string | number>;

export const CUSTOM_PREFIX = 'custom/';

export interface PullSource {
  /** The platform data type fetched. */
  platformType: string;
  /** The record as stored (what readers get). */
  map(record: Json): Json;
}

export type PullSourceResult = PullSource | { unavailable: string };

/** The account's configuration of a kind for the pull's platform and this data type (or custom identifier), if any. */
export type ConfigReader = (kind: ConfigKind, name: string) => Promise<unknown>;

const compile = (fields: Record<string, string>): Array<[string, Steps]> =>
  Object.entries(fields).flatMap(([name, path]) => {
    const steps = parseSourcePath(path);
    return steps ? [[name, steps] as [string, Steps]] : [];
  });

/** Values at configured paths; a field the record lacks is left out, as a field with no value is everywhere. */
const pick = (record: Json, fields: Array<[string, Steps]>): Json => Object.fromEntries(fields.flatMap(([name, steps]) => {
  const value = readPath(record, steps);
  return value === undefined || value === null ? [] : [[name, value]];
}));

async function supplemental(configs: ConfigReader, dataType: string): Promise<PullSource> {
  const config = await configs('supplemental', dataType) as SupplementalConfig | undefined;
  const sources = Object.entries(config?.supplementalDataConfig ?? {})
    .map(([name, source]) => [name, compile(source.pullData ?? {})] as const)
    .filter(([, fields]) => fields.length > 0);
  if (sources.length === 0) return { platformType: dataType, map: (record) => record };
  return {
    platformType: dataType,
    map: (record) => ({ ...record, supplementalData: { content: Object.fromEntries(sources.map(([name, fields]) => [name, pick(record, fields)])) } }),
  };
}

async function custom(configs: ConfigReader, integrationKey: string, identifier: string, clock: Clock): Promise<PullSourceResult> {
  const integration = integrationByKey(integrationKey);
  const config = await configs('custom', identifier) as CustomDataTypeConfig | undefined;
  if (!integration || !config) return { unavailable: `No custom data type ${identifier} is configured for ${integration?.name ?? integrationKey}.` };
  const platformType = customSource(integration, config.dataSource);
  if (!platformType) return { unavailable: `The custom data type ${identifier} reads ${config.dataSource}, which ${integration.name} does not serve.` };
  const content = compile(config.requiredData);
  const keyBy = (config.keyBy ?? []).map(parseSourcePath).filter((s): s is Steps => s !== undefined);
  const modified = (config.sourceModifiedDate ?? []).map(parseSourcePath).filter((s): s is Steps => s !== undefined);
  return {
    platformType,
    map: (record) => {
      const keys = keyBy.map((steps) => readPath(record, steps)).filter((v) => v !== undefined && v !== null);
      const sourceModified = modified.map((steps) => readPath(record, steps)).find((v) => typeof v === 'string');
      return {
        id: keys.length > 0 ? keys.map(String).join('-') : String(record.id ?? ''),
        // The public document types each content entry as an object: a value is carried as { value }.
        content: Object.fromEntries(Object.entries(pick(record, content)).map(([k, v]) => [k, { value: v }])),
        modifiedDate: { modifiedDate: isoSeconds(clock.now()) },
        ...(sourceModified ? { sourceModifiedDate: sourceModified } : {}),
      };
    },
  };
}

/** `configs` reads the configurations of the account that owns the pull's company, for its connection's platform. */
export async function pullSource(configs: ConfigReader, clock: Clock, integrationKey: string, dataType: string): Promise<PullSourceResult> {
  return dataType.startsWith(CUSTOM_PREFIX)
    ? custom(configs, integrationKey, dataType.slice(CUSTOM_PREFIX.length), clock)
    : supplemental(configs, dataType);
}

/** A stored record as the records table keeps it (a custom record's modifiedDate is nested). */
export function recordRow(stored: Json): RecordInput {
  const row: RecordInput = { id: String(stored.id), data: JSON.stringify(stored) };
  const modified = typeof stored.modifiedDate === 'string' ? stored.modifiedDate : (stored.modifiedDate as { modifiedDate?: unknown } | undefined)?.modifiedDate;
  if (typeof modified === 'string') row.modifiedDate = modified;
  return row;
}
