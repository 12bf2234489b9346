// Where a configured field is read from in a platform's record. The public API names
// source fields as JSONPath over the platform's result set (`$[*].currencyCode`); a
// record is one element of that set, so `$[*].`, `$.` or nothing lead to the same field.
// Only what a field reference needs is accepted: dotted names and array indexes
// (`lineItems[0].description`). Anything else is refused when the configuration is saved.

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MAX_LENGTH = 200;

/** The path's steps (names and array indexes), or undefined when it is not a field reference. */
export function parseSourcePath(path: string): Array<string | number> | undefined {
  if (path.length === 0 || path.length > MAX_LENGTH) return undefined;
  const body = path.replace(/^\$\[\*\]\.?/, '').replace(/^\$\.?/, '');
  if (body === '') return undefined;
  const steps: Array<string | number> = [];
  for (const part of body.split('.')) {
    const match = /^([^[\]]+)((?:\[\d{1,6}\])*)$/.exec(part);
    if (!match || !SEGMENT.test(match[1]!)) return undefined;
    steps.push(match[1]!);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

/** The value at a parsed path, or undefined when the record lacks it. */
export function readPath(record: unknown, steps: ReadonlyArray<string | number>): unknown {
  let value = record;
  for (const step of steps) {
    if (value === null || typeof value !== 'object') return undefined;
    if (typeof step === 'number' ? !Array.isArray(value) : !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}
