// A row's result as the results file holds it, and the words for what went wrong with it:
// its fields' problems, or the service's answer.
import { ApiRequestError, ConnectionError } from '../../client/errors.js';
import type { RowProblem, RowResult, ValidRow } from './types.js';

/** A company or connection POST whose outcome is unknown (the service may have acted). */
export function ambiguous(err: unknown): boolean {
  return err instanceof ConnectionError || (err instanceof ApiRequestError && err.status >= 500);
}

/** A row's result before any step has run: failed, with what the row itself says. */
export function baseResult(row: Partial<ValidRow> & { row: number }): RowResult {
  return {
    row: row.row, externalId: row.externalId ?? '', companyName: row.companyName ?? '', platformKey: row.platformKey ?? '',
    companyId: row.companyId ?? '', connectionId: row.connectionId ?? '', status: 'failed', step: '', httpStatus: '', error: '', correlationId: '',
  };
}

export function problemText(problems: RowProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}

export function errorText(err: unknown): string {
  if (err instanceof ApiRequestError) {
    const items = err.validation.map((v) => `${v.itemId ? `${v.itemId}: ` : ''}${v.message}`);
    return items.length > 0 ? `${err.message} (${items.join('; ')})` : err.message;
  }
  return (err as Error)?.message ?? String(err);
}
