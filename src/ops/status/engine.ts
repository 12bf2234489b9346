// One company's state as `ferry status` shows it: its connections (a Deauthorized one
// needs reauthorization) and its data sets, with the latest pull's state, the last
// successful sync, the record count and the error of a failed pull.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { isFailed, reauthorizationRequired, type DataStatusEntry, type WireCompany, type WireConnection } from '../../client/wire.js';
import { DATA_TYPES, dataTypeByKey } from '../../platforms/data-types.js';
import { integrationLookup } from '../platform-knowledge.js';

/** One data set of the --json output. */
export interface DataSetStatus {
  dataType: string;
  /** The latest pull's status (Complete, Fetching, AuthError, …), or NotRequested. */
  state: string;
  /** Whether a connection's platform supports the type. */
  supported: boolean;
  lastSuccessfulSync?: string;
  latestSyncId?: string;
  /** Records in the readable snapshot (totalResults); omitted until a sync has completed. */
  records?: number;
  /** The latest pull's error message, when it failed. */
  error?: string;
}

export interface ConnectionStatus {
  id: string;
  platformKey: string;
  platformName: string;
  status: string;
  reauthorizationRequired: boolean;
  lastSync?: string;
  /** null when there are none (the service leaves the field out then). */
  dataConnectionErrors: NonNullable<WireConnection['dataConnectionErrors']> | null;
}

export interface CompanyStatus {
  id: string;
  name: string;
  lastSync?: string;
  connections: ConnectionStatus[];
  dataSets: DataSetStatus[];
}

export const NOT_REQUESTED = 'NotRequested';

export async function companyStatus(client: ApiClient, companyId: string, signal?: AbortSignal): Promise<CompanyStatus> {
  const company = await api.company<WireCompany>(client, companyId, signal);
  const keys = [...new Set(company.dataConnections.map((c) => c.integrationKey))];
  const lookup = integrationLookup(client, signal);
  const [integrations, dataStatus] = await Promise.all([
    Promise.all(keys.map((key) => lookup(key).catch(() => undefined))),
    api.dataStatus(client, companyId, signal),
  ]);
  const supported = new Set(integrations.flatMap((i) => i?.dataTypes ?? []));
  const known: string[] = DATA_TYPES.map((t) => t.key);
  const types = [
    ...known.filter((key) => supported.has(key) || key in dataStatus),
    ...Object.keys(dataStatus).filter((key) => !known.includes(key)).sort(),
  ];

  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(4);
  const dataSets = await Promise.all(types.map((key) => limit(async (): Promise<DataSetStatus> => {
    const entry: DataStatusEntry | undefined = dataStatus[key];
    const set: DataSetStatus = { dataType: key, state: entry?.currentStatus ?? NOT_REQUESTED, supported: supported.has(key) };
    if (entry?.lastSuccessfulSync) set.lastSuccessfulSync = entry.lastSuccessfulSync;
    if (entry?.latestSyncId) set.latestSyncId = entry.latestSyncId;
    const path = dataTypeByKey(key)?.path;
    if (entry?.lastSuccessfulSync && path) {
      // 409 (no completed sync) or 404 (no longer supported) leave the count out.
      const page = await api.dataPage(client, companyId, path, { pageSize: 1 }, signal).catch(() => undefined);
      if (page) set.records = page.totalResults;
    }
    if (entry?.latestSyncId && isFailed(entry.currentStatus)) {
      const pull = await api.pull(client, companyId, entry.latestSyncId, signal).catch(() => undefined);
      const message = pull?.errorMessage ?? pull?.statusDescription;
      if (message) set.error = message;
    }
    return set;
  })));

  const result: CompanyStatus = { id: company.id, name: company.name, connections: [], dataSets };
  if (company.lastSync) result.lastSync = company.lastSync;
  result.connections = company.dataConnections.map((c) => {
    const connection: ConnectionStatus = {
      id: c.id,
      platformKey: c.integrationKey,
      platformName: c.platformName,
      status: c.status,
      reauthorizationRequired: reauthorizationRequired(c),
      dataConnectionErrors: c.dataConnectionErrors ?? null,
    };
    if (c.lastSync) connection.lastSync = c.lastSync;
    return connection;
  });
  return result;
}
