// The one reader of results CSVs (`ferry migrate tokens` writes them; `sync`, `check`, the
// managed steps and the demo read them back). Column names match whatever their case;
// `status` and `companyId` are the ones a reader needs.
import { createReadStream, statSync } from 'node:fs';
import { inputError, OpError } from '../errors.js';
import { RESULT_COLUMNS, type RowResult } from './types.js';

const CANONICAL = new Map(RESULT_COLUMNS.map((c) => [c.toLowerCase(), c]));
const WRITTEN_BY = 'Give the results CSV that `ferry migrate tokens` wrote';

/** The rows of a results file, each with the columns it has (row as a number). `label` names the file in errors. */
export async function* readResultRows(path: string, label = path): AsyncGenerator<Partial<RowResult>> {
  try {
    if (!statSync(path).isFile()) throw new Error('not a file');
  } catch (err) {
    throw inputError(`Cannot read ${label}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  const { parse } = await import('csv-parse');
  let header: string[] | undefined;
  const parser = createReadStream(path).pipe(parse({
    bom: true,
    columns: (names: string[]) => (header = names.map((n) => CANONICAL.get(n.trim().toLowerCase()) ?? n.trim())),
    skip_empty_lines: true,
    relax_column_count: true,
    trim: true,
  }));
  const needColumn = () => {
    if (header && !header.includes('companyId')) {
      throw inputError(`${path} has no companyId column.`, `${WRITTEN_BY} (columns row, externalId, companyName, platformKey, companyId, …).`);
    }
  };
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      needColumn();
      yield { ...record, ...(record.row !== undefined ? { row: Number(record.row) } : {}) } as Partial<RowResult>;
    }
  } catch (err) {
    parser.destroy();
    if (err instanceof OpError) throw err;
    throw inputError(`${label} is not a readable CSV: ${(err as Error).message}`);
  }
  if (!header) throw inputError(`${path} is empty.`, `${WRITTEN_BY}.`);
  needColumn();
}

/** Company ids of a results CSV: rows whose status is migrated or skipped (all rows when there is no status column). */
export async function companyIdsFromResults(path: string, label = `--from-results ${path}`): Promise<{ ids: string[]; skipped: Record<string, number> }> {
  const ids: string[] = [];
  const seen = new Set<string>();
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  for await (const row of readResultRows(path, label)) {
    const status = row.status === undefined ? undefined : row.status.toLowerCase();
    if (status !== undefined && status !== 'migrated' && status !== 'skipped') {
      skip(status || 'no status');
      continue;
    }
    const companyId = row.companyId ?? '';
    if (companyId === '') {
      skip('no companyId');
      continue;
    }
    if (!seen.has(companyId)) {
      seen.add(companyId);
      ids.push(companyId);
    }
  }
  return { ids, skipped };
}

/** A run's results by row number; none when the run wrote no file yet. */
export async function resultsByRow(path: string): Promise<Map<number, RowResult>> {
  const results = new Map<number, RowResult>();
  try {
    if (!statSync(path).isFile()) return results;
  } catch {
    return results;
  }
  for await (const row of readResultRows(path)) if (row.row !== undefined) results.set(row.row, row as RowResult);
  return results;
}
