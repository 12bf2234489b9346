// A data set that cannot be read for a company: not synced yet (409), not supported by its
// platform, or the company gone (404). With --all-companies such a company is skipped and
// listed; with --company it ends the export with what to run.
import * as api from '../../client/api.js';
import { ApiRequestError } from '../../client/errors.js';
import { DATA_TYPES } from '../../platforms/data-types.js';
import { OpError, suggestingError } from '../errors.js';
import type { ListedCompany } from './checkpoint.js';
import type { ExportEnv, ExportPlan, SkippedCompany } from './types.js';

/** The data set cannot be read for this company (409 not synced, 404 unsupported or gone). */
export class DataSetUnavailable extends Error {
  constructor(readonly skipped: SkippedCompany, override readonly cause: ApiRequestError, readonly dataType: string) {
    super(skipped.message);
  }
}


/**
 * A 409 or 404 on a company's first page, as a skip reason; anything else is left as it
 * is. A 404 is told apart by what the client knows and asks, not by the service's
 * wording: a data type ferry does not know, a company that is gone, or (the company is
 * there) a data type its platform does not support.
 */
export async function unavailable(err: ApiRequestError, company: ListedCompany, plan: ExportPlan, env: ExportEnv): Promise<unknown> {
  const { dataType, allCompanies, knownDataType } = plan;
  let reason: SkippedCompany['reason'];
  if (err.status === 409) reason = 'notSynced';
  else if (err.status !== 404) return err;
  else if (knownDataType === false) {
    return new OpError(`The service does not know the data type ${dataType} (HTTP 404).`, 'failed', `Data types: ${DATA_TYPES.map((t) => t.key).join(', ')}.`);
  } else if (await companyExists(env, company.id)) reason = 'unsupported';
  // With --all-companies a company that vanished after the list was taken is skipped; with --company, a 404 is the service's own error.
  else if (allCompanies) reason = 'notFound';
  else return err;
  const message = reason === 'unsupported' ? `${err.message} (HTTP 404)` : skipMessage(reason, err.status, dataType);
  return new DataSetUnavailable({ companyId: company.id, name: company.name, status: err.status, reason, message }, err, dataType);
}

/** --company: the data set cannot be exported; say why and what to run. */
export function unavailableError(err: DataSetUnavailable): OpError {
  const { companyId } = err.skipped;
  if (err.skipped.reason === 'notSynced') {
    return suggestingError(`${err.cause.message} (HTTP 409)`, 'failed', { args: ['sync', companyId, '--data-type', err.dataType, '--wait'], hint: (command) => `Sync it first: ${command}` });
  }
  return new OpError(`${err.cause.message} (HTTP 404)`, 'failed', 'ferry integrations get KEY lists the data types a platform supports.');
}


/** A skipped company's words. The command to sync it is the run's hint, which carries the target's flags and reads the not-synced file. */
export function skipMessage(reason: string, status: number, dataType: string): string {
  if (reason === 'notSynced') return `the ${dataType} data set is not synced yet (HTTP ${status})`;
  if (reason === 'unsupported') return `its platform does not support ${dataType} (HTTP ${status})`;
  return `the company was not found (HTTP ${status}); it was deleted after the export started`;
}

async function companyExists(env: ExportEnv, companyId: string): Promise<boolean> {
  try {
    await api.company(env.client, companyId, env.signal);
    return true;
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) return false;
    throw err;
  }
}
