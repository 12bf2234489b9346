// Label values of the metrics, each from a set known in advance: a label whose values grow
// with the data (company, connection or key ids, custom data types, paths) would grow the
// series without bound. What falls outside a set is counted under one value.
import { dataTypeByKey } from '../../platforms/data-types.js';

/** A data type of the catalogue as it is; an account's custom data type as `custom`. */
export function dataTypeLabel(dataType: string): string {
  if (dataTypeByKey(dataType)) return dataType;
  return dataType.startsWith('custom/') ? 'custom' : 'other';
}

/** Every value of the `method` label: a method outside the list is `OTHER`. */
export const METHOD_LABELS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER'] as const;
const METHODS = new Set<string>(METHOD_LABELS.slice(0, -1));

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER';
}

/** The route's template (`/companies/:companyId`), never the path; a request no route matched is `unmatched`. */
export function routeLabel(template: string | undefined): string {
  return template ?? 'unmatched';
}
