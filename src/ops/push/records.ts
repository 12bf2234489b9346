// The records of a push file: one .json object, a .json array (parsed whole, so a syntax
// error sends nothing), or .ndjson (one object a line, streamed). Each record keeps the
// line it starts on, so every outcome points back into the file.
import { inputError } from '../errors.js';

export interface FileRecord {
  line: number;
  value?: unknown;
  problem?: string;
}

export function fileFormat(file: string): 'json' | 'ndjson' {
  const lower = file.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  throw inputError(`--file ${file} must end in .json or .ndjson.`, 'A .json file holds one object or an array of objects; a .ndjson file one object a line.');
}

function problemOf(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : `not a JSON object (${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})`;
}

/** One object a line, streamed; blank lines are skipped; a line that is not an object is an Invalid result. */
export async function* ndjsonRecords(file: string): AsyncGenerator<FileRecord> {
  const { createReadStream } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line += 1;
    const text = (line === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
    if (text === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { line, problem: `not valid JSON: ${(err as Error).message}` };
      continue;
    }
    const problem = problemOf(value);
    yield problem ? { line, problem } : { line, value };
  }
}

export async function jsonFileRecords(file: string): Promise<FileRecord[]> {
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw inputError(`${file} is not valid JSON: ${(err as Error).message}. Nothing was pushed.`, 'For one record a line, name the file .ndjson.');
  }
  if (Array.isArray(value)) {
    const lines = arrayElementLines(text);
    return value.map((item, i) => {
      const line = lines[i] ?? 1;
      const problem = problemOf(item);
      return problem ? { line, problem } : { line, value: item };
    });
  }
  const problem = problemOf(value);
  if (problem) throw inputError(`${file} must hold a JSON object or an array of objects; it holds ${problem.replace(/^not a JSON object \((.*)\)$/, '$1')}.`);
  return [{ line: text.slice(0, text.search(/\S/) + 1).split('\n').length, value }];
}

/** The 1-based line where each element of a top-level JSON array starts (the text is valid JSON). */
export function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectValue = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\n') line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue;
    if (depth === 1 && expectValue && c !== ']') {
      lines.push(line);
      expectValue = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth += 1;
      if (depth === 1) expectValue = true;
    } else if (c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 1) expectValue = true;
  }
  return lines;
}
