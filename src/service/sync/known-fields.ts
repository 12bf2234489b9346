// The fields a store is known to hold already (data_type_fields), so a sync job sends only
// paths it has not seen: a page's sample shows a few hundred paths, and after the first
// companies of a run nearly all of them are known. A path is known only once the
// transaction that remembered it committed, and the store never forgets one (its first
// type stays), so what is known here stays true for as long as the store is open.
import type { FieldType } from '../query/types.js';
import type { AsyncStore } from '../store/async-store.js';

type Fields = Map<string, Map<string, FieldType>>;

/** By store: each data type's paths known to be remembered. */
const known = new WeakMap<AsyncStore, Map<string, Set<string>>>();

/** The fields among `fields` (by data type, path to type) that `store` may not hold yet. */
export function unknownFields(store: AsyncStore, fields: Fields): Fields {
  const byType = known.get(store);
  if (!byType) return fields;
  const unknown: Fields = new Map();
  for (const [dataType, found] of fields) {
    const paths = byType.get(dataType);
    const left = paths ? new Map([...found].filter(([path]) => !paths.has(path))) : found;
    if (left.size > 0) unknown.set(dataType, left);
  }
  return unknown;
}

/** `fields` were remembered in a transaction that committed. */
export function fieldsRemembered(store: AsyncStore, fields: Fields): void {
  let byType = known.get(store);
  if (!byType) known.set(store, byType = new Map());
  for (const [dataType, found] of fields) {
    let paths = byType.get(dataType);
    if (!paths) byType.set(dataType, paths = new Set());
    for (const path of found.keys()) paths.add(path);
  }
}
