// The end-to-end check of one migrated company, the managed migration's acceptance test
// (steps 5 and 6) and `ferry check`. Four criteria, each with its own evidence:
//   connection     the company's connection is Linked;
//   sync           every data type the platform supports is Complete after a FRESH sync
//                  (queued by the check, then waited for);
//   authorization  no reauthorization needed: no AuthError, the connection still Linked with
//                  no dataConnectionErrors after the service used (and refreshed) its tokens,
//                  and, where the platform can be asked (the sandbox), no refresh by the
//                  client's legacy application since the migration;
//   reads          a read of every data type answers 200.
// The verdict passes only when no criterion fails. Nothing here prints: callers render.
import * as api from '../../client/api.js';
import { AdaptiveLimit, limitOptions } from '../../client/adaptive-limit.js';
import { ApiRequestError } from '../../client/errors.js';
import type { WireCompany, WireConnection } from '../../client/wire.js';
import { describeError, isFatal } from '../../client/errors.js';
import { currentState, freshSync, readEvery, type Tracked } from './criteria.js';
import type { CheckDeps, CheckOptions, CheckResult, CheckTarget, Criterion } from './types.js';
import { legacyRefreshes, type LegacyLookup } from './platform-lookups.js';

const REAUTH = 'reauthorization required';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function latestError(connection: WireConnection): string | undefined {
  const errors = [...(connection.dataConnectionErrors ?? [])].sort((a, b) => (a.erroredOnUtc ?? '').localeCompare(b.erroredOnUtc ?? ''));
  return errors.pop()?.errorMessage;
}

/** "Reauthorization required: …" from the service, lower-cased once so reasons read alike. */
function reauthReason(message: string | undefined): string {
  const text = (message ?? 'the platform revoked the grant').replace(/^reauthorization required:?\s*/i, '');
  return `${REAUTH}: ${text}`;
}

export async function checkCompany(target: CheckTarget, options: CheckOptions, deps: CheckDeps): Promise<CheckResult> {
  const { client } = deps;
  const { signal } = options;
  const started = Date.now();
  const criteria: Criterion[] = [];
  const reasons: string[] = [];
  const result: CheckResult = {
    companyId: target.companyId, verdict: 'fail', reasons, criteria, startedAt: iso(started), finishedAt: '', seconds: 0,
  };

  // 1. connection
  let company: TaggedCompany;
  try {
    company = await api.company<TaggedCompany>(client, target.companyId, signal);
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) {
      criteria.push({ name: 'connection', status: 'fail', summary: 'the company does not exist', evidence: { httpStatus: 404 } });
      reasons.push(`company ${target.companyId} not found`);
      return finish(result, started);
    }
    throw err;
  }
  result.companyName = company.name;
  const candidates = company.dataConnections.filter((c) => !target.platformKey || c.integrationKey === target.platformKey);
  const connection = candidates.find((c) => c.status === 'Linked') ?? candidates.find((c) => c.status === 'Deauthorized') ?? candidates[0];
  if (!connection) {
    const what = target.platformKey ? `no ${target.platformKey} connection` : 'no connection';
    criteria.push({ name: 'connection', status: 'fail', summary: what, evidence: { connections: company.dataConnections.map((c) => ({ id: c.id, platform: c.integrationKey, status: c.status })) } });
    reasons.push(`${what}: nothing was migrated into this company`);
    return finish(result, started);
  }
  result.connectionId = connection.id;
  result.platformKey = connection.integrationKey;
  criteria.push(connectionCriterion(connection, reasons));

  // 2. sync
  const supported = (await deps.integration(connection.integrationKey)).dataTypes;
  const tracked = new Map<string, Tracked>();
  const check: Check = { target, options, deps, reasons, tracked };
  criteria.push(await syncCriterion(check, connection, supported, result));

  // 3. authorization
  criteria.push(await authorizationCriterion(check, company, connection, result.startedAt));

  // 4. reads
  const reads = await readEvery(client, target.companyId, supported, signal);
  criteria.push(reads.criterion);
  if (reads.criterion.status === 'fail') reasons.push(`reads: ${reads.criterion.summary}`);
  result.records = reads.records;
  return finish(result, started);
}

type TaggedCompany = WireCompany & { tags?: Record<string, string> };

/** What the criteria of one company's check share: what was asked, and the reasons and data types' states found so far. */
interface Check {
  target: CheckTarget;
  options: CheckOptions;
  deps: CheckDeps;
  reasons: string[];
  /** Each data type's pull, as the sync criterion found it. */
  tracked: Map<string, Tracked>;
}

/** The result's end time, duration and verdict, its reasons each said once. */
function finish(result: CheckResult, started: number): CheckResult {
  const { criteria, reasons } = result;
  const ended = Date.now();
  result.finishedAt = iso(ended);
  result.seconds = Math.round((ended - started) / 100) / 10;
  result.verdict = criteria.some((c) => c.status === 'fail') || criteria.find((c) => c.name === 'connection')?.status !== 'pass' ? 'fail' : 'pass';
  // The same cause is often seen by two criteria (an AuthError and a Deauthorized connection).
  const unique = [...new Set(reasons)];
  reasons.splice(0, reasons.length, ...unique);
  return result;
}

/** 1. The chosen connection is Linked. */
function connectionCriterion(connection: WireConnection, reasons: string[]): Criterion {
  const connectionEvidence = { connectionId: connection.id, platform: connection.integrationKey, platformName: connection.platformName, status: connection.status, created: (connection as { created?: string }).created };
  if (connection.status === 'Linked') {
    return { name: 'connection', status: 'pass', summary: `Linked (${connection.platformName})`, evidence: connectionEvidence };
  }
  reasons.push(connection.status === 'Deauthorized' ? reauthReason(latestError(connection)) : `connection ${connection.status}, not Linked`);
  return { name: 'connection', status: 'fail', summary: `${connection.status}, not Linked`, evidence: connectionEvidence };
}

/** 2. Every supported data type Complete: after a fresh sync (options.sync), or as the data sets are. */
async function syncCriterion(check: Check, connection: WireConnection, supported: string[], result: CheckResult): Promise<Criterion> {
  const { target, options, deps, reasons, tracked } = check;
  if (connection.status !== 'Linked') {
    return { name: 'sync', status: 'skipped', summary: 'not run: the connection is not Linked', evidence: {} };
  }
  if (supported.length === 0) {
    // Nothing to judge is no pass: this ferry does not know the platform's data types.
    const criterion: Criterion = { name: 'sync', status: 'fail', summary: `this ferry does not know which data types ${connection.integrationKey} supports (update ferry)`, evidence: { platform: connection.integrationKey } };
    reasons.push(`sync: ${criterion.summary}`);
    return criterion;
  }
  if (options.sync) {
    const criterion = await freshSync(deps.client, target.companyId, supported, tracked, options, deps.changes);
    if (criterion.status === 'fail') {
      const failed = [...tracked].filter(([, t]) => t.status !== 'Complete');
      const auth = failed.find(([, t]) => t.status === 'AuthError');
      if (auth) reasons.push(reauthReason(auth[1].error));
      else reasons.push(`sync: ${criterion.summary}`);
    }
    const seconds = criterion.evidence.seconds;
    if (typeof seconds === 'number') result.syncSeconds = seconds;
    return criterion;
  }
  const criterion = await currentState(deps.client, target.companyId, supported, tracked, options.signal);
  if (criterion.status === 'fail') reasons.push(`sync: ${criterion.summary}`);
  return criterion;
}

/**
 * 3. No reauthorization needed: the connection, read again, still Linked with no errors, no
 * AuthError in the sync, and no refresh by the legacy application since the migration.
 */
async function authorizationCriterion(check: Check, company: TaggedCompany, connection: WireConnection, startedAt: string): Promise<Criterion> {
  const { target, options: { signal }, deps, reasons, tracked } = check;
  const after = await api.company<WireCompany>(deps.client, target.companyId, signal);
  const now = after.dataConnections.find((c) => c.id === connection.id);
  const errors = now?.dataConnectionErrors ?? [];
  const authErrors = [...tracked].filter(([, t]) => t.status === 'AuthError').map(([type]) => type);
  const tenantId = target.tenantId ?? tenantFromKey(company.tags?.ferryKey);
  const created = (connection as { created?: string }).created ?? startedAt;
  const since = target.legacySince ?? { at: created, what: `the connection was migrated at ${created}` };
  const legacy: LegacyLookup = await legacyRefreshes(deps.sandbox, tenantId, since.at, signal);
  const problems: string[] = [];
  if (!now) problems.push('the connection disappeared during the check');
  else if (now.status !== 'Linked') {
    problems.push(`connection ${now.status}`);
    if (now.status === 'Deauthorized') reasons.push(reauthReason(latestError(now)));
  }
  if (errors.length > 0) {
    problems.push(`${errors.length} dataConnectionError${errors.length === 1 ? '' : 's'}`);
    if (now?.status === 'Linked') reasons.push(`connection errors: ${latestError(now) ?? 'see ferry status'}`);
  }
  if (authErrors.length > 0) problems.push(`AuthError on ${authErrors.join(', ')}`);
  if (legacy.checked && legacy.refreshes.length > 0) {
    const first = legacy.refreshes[0]!;
    problems.push(`${legacy.refreshes.length} legacy refresh${legacy.refreshes.length === 1 ? '' : 'es'} since ${since.at}`);
    reasons.push(`${REAUTH}: the legacy application refreshed the token at ${first.at}, after ${since.what}`);
  }
  const legacyEvidence = legacy.checked
    ? { tenantId: legacy.tenantId, since: legacy.since, refreshes: legacy.refreshes }
    : { notChecked: legacy.why };
  const authEvidence = {
    status: now?.status ?? 'missing', dataConnectionErrors: errors, authErrors, legacyRefreshes: legacyEvidence,
  };
  if (connection.status !== 'Linked' && problems.length === 0) problems.push(`connection ${connection.status}`);
  return problems.length === 0
    ? {
      name: 'authorization', status: 'pass', evidence: authEvidence,
      summary: `no reauthorization needed: still Linked, no AuthError, no connection errors${legacy.checked ? ', no legacy refresh since the migration' : ` (legacy refreshes not checked: ${legacy.why})`}`,
    }
    : { name: 'authorization', status: 'fail', summary: `${REAUTH}: ${problems.join('; ')}`, evidence: authEvidence };
}

/** A ferryKey made from an externalId (`ext:<id>`) names the sandbox tenant. */
function tenantFromKey(key: string | undefined): string | undefined {
  return key?.startsWith('ext:') ? key.slice(4) : undefined;
}

/**
 * Checks many companies, as many at once as the adaptive limit allows (`limit`, else one
 * from `concurrency` and `maxRate`); `onResult` sees each result as it comes.
 */
export async function checkCompanies(
  targets: CheckTarget[], options: CheckOptions & { concurrency?: number; maxRate?: number; limit?: AdaptiveLimit }, deps: CheckDeps, onResult?: (result: CheckResult) => void,
): Promise<CheckResult[]> {
  const limit = options.limit ?? new AdaptiveLimit(limitOptions(options));
  const detach = limit.attach(deps.client);
  // A check that passed took the time a check takes; a failed one may have stopped early.
  const sample = { sample: (result: CheckResult | undefined) => result?.verdict === 'pass' };
  return Promise.all(targets.map((target) => limit.run(async () => {
    if (options.signal.aborted) return undefined;
    let result: CheckResult;
    try {
      result = await checkCompany(target, options, deps);
    } catch (err) {
      if (isFatal(err) || options.signal.aborted) throw err;
      const at = iso(Date.now());
      result = {
        companyId: target.companyId, verdict: 'fail', reasons: [`the check could not run: ${describeError(err)}`], criteria: [], startedAt: at, finishedAt: at, seconds: 0,
      };
    }
    onResult?.(result);
    return result;
  }, options.signal, sample).catch((err: unknown) => {
    // Still waiting for a slot when interrupted: not checked.
    if (options.signal.aborted) return undefined;
    throw err;
  }))).then((all) => all.filter((r): r is CheckResult => r !== undefined)).finally(detach);
}
