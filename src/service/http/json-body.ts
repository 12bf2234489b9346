// The service's JSON body parser: an empty body is no body (clients send Content-Type on
// bodiless DELETEs), bad JSON is 400, and so is nesting deeper than any record needs,
// checked before anything walks the value recursively (validators, platforms).
import { MAX_JSON_DEPTH } from '../../platforms/limits.js';
import { errors } from '../errors.js';

/** True when objects and arrays nest more than `max` deep; iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export function parseJsonBody(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw errors.malformedJson();
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw errors.bodyTooDeep(MAX_JSON_DEPTH);
  return value;
}
