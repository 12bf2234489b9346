// Optional fields with no value are left out of what the service sends, never sent as
// null: strict clients (the earlier platform SDK among them) refuse a null where their
// document has a string, and every client accepts a field left out.

/** The record without the fields that have no value (null or undefined); one level deep. */
export function compact(record: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== null && value !== undefined) kept[key] = value;
  return kept;
}
