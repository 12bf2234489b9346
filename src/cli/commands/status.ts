// `ferry status COMPANY_ID`: one company's connections (a Deauthorized one needs
// reauthorization) and its data sets: state, last successful sync, record count.
import type { Command } from 'commander';
import type { ApiClient } from '../../client/client.js';
import type { CommandContext } from '../context.js';
import {
  connectionStatusText, isFailed, reauthorizationRequired,
  type DataStatus, type DataStatusEntry, type PullOperation, type WireCompany, type WireConnection, type WireIntegration,
} from '../../client/wire.js';
import type { IO } from '../io.js';
import type { Registrar } from '../program.js';
import { examples } from './group.js';

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
  dataConnectionErrors: WireConnection['dataConnectionErrors'];
}

export interface CompanyStatus {
  id: string;
  name: string;
  lastSync?: string;
  connections: ConnectionStatus[];
  dataSets: DataSetStatus[];
}

export const NOT_REQUESTED = 'NotRequested';

export function register(program: Command, registrar: Registrar): void {
  program.command('status')
    .description('Show a company\'s connections and data sets: state, last sync, record counts')
    .argument('<companyId>', 'the company')
    .addHelpText('after', examples(
      'ferry status 3f0c8a3e-…',
      'ferry status 3f0c8a3e-… --json | jq \'.dataSets[] | select(.state != "Complete")\'',
      'ferry status 3f0c8a3e-… | awk -F\'\\t\' \'$1 == "dataset"\'   # piped: tab-separated, first column says the kind',
    ))
    .action(registrar.action(runStatus));
}

export async function runStatus(_options: object, ctx: CommandContext, [companyId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const status = await companyStatus(client, companyId!, ctx.signal);
  await printStatus(ctx.io, status);
}

export async function companyStatus(client: ApiClient, companyId: string, signal?: AbortSignal): Promise<CompanyStatus> {
  const base = `/companies/${encodeURIComponent(companyId)}`;
  const company = await client.get<WireCompany>(base, { signal });
  const keys = [...new Set(company.dataConnections.map((c) => c.integrationKey))];
  const [integrations, dataStatus] = await Promise.all([
    Promise.all(keys.map((key) => client.get<WireIntegration>(`/integrations/${encodeURIComponent(key)}`, { signal }).catch(() => undefined))),
    client.get<DataStatus>(`${base}/dataStatus`, { signal }),
  ]);
  const supported = new Set(integrations.flatMap((i) => i?.dataTypes ?? []));
  const { DATA_TYPES, dataTypeByKey } = await import('../../platforms/data-types.js');
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
      const page = await client.get<{ totalResults: number }>(`${base}/data/${path}`, { query: { pageSize: 1 }, signal }).catch(() => undefined);
      if (page) set.records = page.totalResults;
    }
    if (entry?.latestSyncId && isFailed(entry.currentStatus)) {
      const pull = await client.get<PullOperation>(`${base}/data/history/${encodeURIComponent(entry.latestSyncId)}`, { signal }).catch(() => undefined);
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
      dataConnectionErrors: c.dataConnectionErrors,
    };
    if (c.lastSync) connection.lastSync = c.lastSync;
    return connection;
  });
  return result;
}

function latestError(connection: ConnectionStatus): string {
  const errors = connection.dataConnectionErrors ?? [];
  const latest = [...errors].sort((a, b) => (a.erroredOnUtc ?? '').localeCompare(b.erroredOnUtc ?? '')).pop();
  if (!latest) return '';
  const text = [latest.statusCode, latest.statusText].filter(Boolean).join(' ');
  const more = errors.length > 1 ? ` (+${errors.length - 1} earlier)` : '';
  return `${text ? `${text}: ` : ''}${latest.errorMessage ?? ''}${latest.erroredOnUtc ? ` at ${latest.erroredOnUtc}` : ''}${more}`;
}

export async function printStatus(io: IO, status: CompanyStatus): Promise<void> {
  if (io.mode === 'json') {
    io.json(status);
    return;
  }
  const { printTable } = await import('../output.js');
  const { default: chalk } = await import('chalk');
  const tty = io.mode === 'tty';
  const kind = (name: string) => (tty ? [] : [{ header: 'kind', value: () => name }]);

  if (tty) {
    io.out(`${io.color ? chalk.bold(status.name) : status.name}  ${status.id}${status.lastSync ? `  last sync ${status.lastSync}` : ''}`);
    io.out('');
  } else {
    io.out(['company', status.id, status.name, status.lastSync ?? ''].join('\t'));
  }
  if (status.connections.length === 0) {
    io.err('This company has no connections: create one with ferry connections create --company ' + status.id + ' --platform KEY.');
  } else {
    printTable(io, status.connections, [
      ...kind('connection'),
      { header: 'connection', value: (c) => c.id },
      { header: 'platform', value: (c) => (tty ? `${c.platformName} (${c.platformKey})` : c.platformKey) },
      { header: 'status', value: (c) => connectionStatusText(c) },
      { header: 'last sync', value: (c) => c.lastSync },
      { header: 'errors', value: latestError },
    ]);
  }
  if (tty) io.out('');
  printTable(io, status.dataSets, [
    ...kind('dataset'),
    { header: 'data type', value: (d) => d.dataType },
    { header: 'state', value: (d) => (tty && d.state === NOT_REQUESTED ? 'not requested' : d.state) },
    { header: 'last successful sync', value: (d) => d.lastSuccessfulSync },
    { header: 'records', value: (d) => (d.records === undefined ? (tty ? '-' : '') : tty ? d.records.toLocaleString('en-US') : d.records) },
    { header: 'error', value: (d) => d.error ?? (d.supported ? '' : 'not supported by its platforms') },
  ]);
  for (const c of status.connections.filter((x) => x.reauthorizationRequired)) {
    const warning = `${c.platformName} connection ${c.id} is Deauthorized: reauthorization required.`;
    io.err(io.color ? chalk.red(warning) : warning);
    io.err(`hint: have the organisation authorize again, then: ferry connections authorize --company ${status.id} --connection ${c.id} --tokens-file FILE`);
  }
}
