// Checks of supplemental data and custom data type configurations, with one validation
// item per problem so a client fixes everything in one go. What passes is stored as it
// was sent (minus nothing): the sync reads it back through the same parsers.
import type { ValidationItem } from '../errors.js';
import { dataTypeByKey, dataTypeByPath } from '../../platforms/data-types.js';
import type { Integration } from '../../platforms/types.js';
import { unknownFieldItems } from '../http/known-fields.js';
import { parseSourcePath } from './source-path.js';

export interface SupplementalSource {
  dataSource?: string;
  pullData?: Record<string, string>;
  pushData?: Record<string, string>;
}

export interface SupplementalConfig {
  supplementalDataConfig: Record<string, SupplementalSource>;
}

export interface CustomDataTypeConfig {
  dataSource: string;
  requiredData: Record<string, string>;
  keyBy: string[];
  sourceModifiedDate?: string[] | null;
}

/** The standard data types that take supplemental data, as the public API lists them (those ferry syncs). */
export const SUPPLEMENTAL_DATA_TYPES = ['chartOfAccounts', 'bills', 'company', 'creditNotes', 'customers', 'invoices', 'items', 'journalEntries', 'suppliers', 'taxRates'];

export const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_SOURCES = 20;
const MAX_FIELDS = 50;
const MAX_DATA_SOURCE = 500;

const item = (itemId: string, message: string): ValidationItem => ({ itemId, message, validatorName: 'DataConfiguration' });
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A map of the client's field names to source paths. */
function fieldMap(where: string, value: unknown, required: boolean): ValidationItem[] {
  if (value === undefined && !required) return [];
  if (!isObject(value)) return [item(where, `${where} must be an object of field names to source paths.`)];
  const entries = Object.entries(value);
  if (required && entries.length === 0) return [item(where, `${where} must name at least one field.`)];
  if (entries.length > MAX_FIELDS) return [item(where, `${where} may name at most ${MAX_FIELDS} fields.`)];
  return entries.flatMap(([name, path]) => {
    if (!NAME.test(name)) return [item(`${where}.${name}`, `${where}: field names are 1 to 64 letters, digits, _ or -.`)];
    if (typeof path !== 'string' || !parseSourcePath(path)) {
      return [item(`${where}.${name}`, `${where}.${name} must be a source path such as $[*].reference or lineItems[0].description.`)];
    }
    return [];
  });
}

export function checkSupplemental(body: Record<string, unknown>): ValidationItem[] {
  const unknown = unknownFieldItems(body, ['supplementalDataConfig']);
  if (unknown.length > 0) return unknown;
  const sources = body.supplementalDataConfig;
  if (!isObject(sources)) return [item('supplementalDataConfig', 'supplementalDataConfig must be an object of named sources.')];
  const entries = Object.entries(sources);
  if (entries.length > MAX_SOURCES) return [item('supplementalDataConfig', `At most ${MAX_SOURCES} named sources per data type.`)];
  return entries.flatMap(([name, source]) => {
    const where = `supplementalDataConfig.${name}`;
    if (!NAME.test(name)) return [item(where, 'Source names are 1 to 64 letters, digits, _ or -.')];
    if (!isObject(source)) return [item(where, `${where} must be an object with dataSource, pullData and pushData.`)];
    const problems: ValidationItem[] = unknownFieldItems(source, ['dataSource', 'pullData', 'pushData'], `${where}.`);
    if (source.dataSource !== undefined && (typeof source.dataSource !== 'string' || source.dataSource.length > MAX_DATA_SOURCE)) {
      problems.push(item(`${where}.dataSource`, `dataSource must be a string of at most ${MAX_DATA_SOURCE} characters.`));
    }
    problems.push(...fieldMap(`${where}.pullData`, source.pullData, false), ...fieldMap(`${where}.pushData`, source.pushData, false));
    return problems;
  });
}

/**
 * The platform data type a custom data type reads: the last segment of its dataSource
 * (`/invoices`, `api/purchaseOrders?$filter=…`), by key or read path.
 */
export function customSource(integration: Integration, dataSource: string): string | undefined {
  const segment = dataSource.split('?')[0]!.split('/').filter(Boolean).pop() ?? '';
  const type = dataTypeByKey(segment) ?? dataTypeByPath(segment);
  return type && integration.dataTypes.includes(type.key) ? type.key : undefined;
}

function pathList(where: string, value: unknown, required: boolean): ValidationItem[] {
  if (!required && (value === undefined || value === null)) return [];
  if (!Array.isArray(value) || (required && value.length === 0) || value.length > MAX_FIELDS) {
    return [item(where, `${where} must be a list of ${required ? '1' : '0'} to ${MAX_FIELDS} source paths.`)];
  }
  return value.flatMap((path, i) => (typeof path === 'string' && parseSourcePath(path) ? [] : [item(`${where}[${i}]`, `${where}[${i}] must be a source path such as $[*].id.`)]));
}

export function checkCustom(integration: Integration, body: Record<string, unknown>): ValidationItem[] {
  const problems: ValidationItem[] = unknownFieldItems(body, ['dataSource', 'requiredData', 'keyBy', 'sourceModifiedDate']);
  const { dataSource } = body;
  if (typeof dataSource !== 'string' || dataSource.length === 0 || dataSource.length > MAX_DATA_SOURCE) {
    problems.push(item('dataSource', `dataSource is required: the platform endpoint to read, at most ${MAX_DATA_SOURCE} characters.`));
  } else if (!customSource(integration, dataSource)) {
    problems.push(item('dataSource', `${integration.name} has no endpoint ${dataSource}: name one of its data types (${integration.dataTypes.join(', ')}).`));
  }
  problems.push(...fieldMap('requiredData', body.requiredData, true), ...pathList('keyBy', body.keyBy, true), ...pathList('sourceModifiedDate', body.sourceModifiedDate, false));
  return problems;
}
