// `ferry status COMPANY_ID`: one company's connections (a Deauthorized one needs
// reauthorization) and its data sets: state, last successful sync, record count.
import { ferryCommand, targetArgs } from '../command-line.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { connectionStatusText } from '../../client/wire.js';
import { NOT_REQUESTED, type CompanyStatus, type ConnectionStatus } from '../../ops/status/engine.js';
import { printResult, type IO } from '../io.js';
import { examples, type Registrar } from '../command.js';
import { formatCount } from '../../ops/progress.js';

export function register(program: Command, registrar: Registrar): void {
  program.command('status')
    .description('Show a company\'s connections and data sets: state, last sync, record counts')
    .argument('<companyId>', 'the company')
    .addHelpText('after', examples(
      'ferry status COMPANY_ID',
      'ferry status COMPANY_ID --json | jq \'.dataSets[] | select(.state != "Complete")\'',
      'ferry status COMPANY_ID | awk -F\'\\t\' \'$1 == "dataset"\'   # piped: tab-separated, first column says the kind',
    ))
    .action(registrar.action(runStatus));
}

export async function runStatus(_options: object, ctx: CommandContext, [companyId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const { companyStatus } = await import('../../ops/status/engine.js');
  const status = await companyStatus(client, companyId!, ctx.signal);
  await printStatus(ctx.io, status, targetArgs(ctx.flags));
}


function latestError(connection: ConnectionStatus): string {
  const errors = connection.dataConnectionErrors ?? [];
  const latest = [...errors].sort((a, b) => (a.erroredOnUtc ?? '').localeCompare(b.erroredOnUtc ?? '')).pop();
  if (!latest) return '';
  const text = [latest.statusCode, latest.statusText].filter(Boolean).join(' ');
  const more = errors.length > 1 ? ` (+${errors.length - 1} earlier)` : '';
  return `${text ? `${text}: ` : ''}${latest.errorMessage ?? ''}${latest.erroredOnUtc ? ` at ${latest.erroredOnUtc}` : ''}${more}`;
}

/** `target`: the flags that reach this service, for the commands it suggests. */
export async function printStatus(io: IO, status: CompanyStatus, target: string[] = []): Promise<void> {
  const { printTable } = await import('../output.js');
  const { default: chalk } = await import('chalk');
  printResult(io, status, () => {
    const tty = io.mode === 'tty';
    const kind = (name: string) => (tty ? [] : [{ header: 'kind', value: () => name }]);

    if (tty) {
      io.out(`${io.color ? chalk.bold(status.name) : status.name}  ${status.id}${status.lastSync ? `  last sync ${status.lastSync}` : ''}`);
      io.out('');
    } else {
      io.out(['company', status.id, status.name, status.lastSync ?? ''].join('\t'));
    }
    if (status.connections.length === 0) {
      io.err(`This company has no connections: create one with ${ferryCommand(['connections', 'create', '--company', status.id], target)} --platform KEY   # keys: ferry integrations list`);
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
      { header: 'records', value: (d) => (d.records === undefined ? (tty ? '-' : '') : tty ? formatCount(d.records) : d.records) },
      { header: 'error', value: (d) => d.error ?? (d.supported ? '' : 'not supported by its platforms') },
    ]);
    for (const c of status.connections.filter((x) => x.reauthorizationRequired)) {
      const warning = `${c.platformName} connection ${c.id} is Deauthorized: reauthorization required.`;
      io.err(io.color ? chalk.red(warning) : warning);
      io.err(`hint: have the organisation authorize again, then: ${ferryCommand(['connections', 'authorize', '--company', status.id, '--connection', c.id], target)} --tokens-file FILE`);
    }
  });
}
