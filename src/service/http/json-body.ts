// The service's JSON body parser: an empty body is no body (clients send Content-Type on
// bodiless DELETEs), bad JSON is 400, and so is nesting deeper than any record needs,
// checked before anything walks the value recursively (validators, platforms), and a NUL
// character in any key or string, which no store can keep as text.
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

/**
 * Where the first key or string holding U+0000 is (`tags.k`, `settings[0].dataType`; `body`
 * for the whole), or undefined; run once the depth is known to be bounded.
 */
function nulAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path || 'body' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value as object)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (key.includes('\0')) return at;
    const found = nulAt(child, at);
    if (found !== undefined) return found;
  }
  return undefined;
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
  // JSON spells a NUL only as the escape \u0000: most bodies are cleared by the text alone.
  const nul = /\\u0000/i.test(trimmed) ? nulAt(value) : undefined;
  if (nul !== undefined) throw errors.nulCharacter('request body', nul);
  return value;
}
