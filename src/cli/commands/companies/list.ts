// `ferry companies list`: one page by default (the page envelope with --json), or every
// page with --all, following _links.next (a JSON array with --json).
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { Page } from '../../../client/client.js';
import type { CommandContext } from '../../context.js';
import { InterruptedError, UsageError } from '../../errors.js';
import { printResult, type IO } from '../../io.js';
import { printTable, type Column } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';
import { wholeNumber } from '../../flags.js';
import type { CompanyRecord } from '../../../client/wire.js';
import { formatCount } from '../../../ops/progress.js';

export interface CompaniesListOptions {
  query?: string;
  orderBy?: string;
  page?: number;
  pageSize?: number;
  all?: boolean;
}

/** Page size for --all when none is given: the service's largest, fewest round trips. */
export const ALL_PAGE_SIZE = 5000;

export const COMPANY_COLUMNS: Column<CompanyRecord>[] = [
  { header: 'id', value: (c) => c.id },
  { header: 'name', value: (c) => c.name },
  { header: 'connections', value: (c) => c.dataConnections?.length ?? 0 },
  { header: 'created', value: (c) => c.created },
  { header: 'lastSync', value: (c) => c.lastSync },
];

export function register(program: Command, registrar: Registrar): void {
  group(program, 'companies', 'Companies: create, list, show, delete')
    .command('list')
    .description('List companies: one page, or every page with --all')
    .option('--query <q>', 'filter, e.g. "name~Acme" or "tags.region=eu" (see docs/api.md)')
    .option('--order-by <field>', 'sort by a field; -field for descending, e.g. -created')
    .option('--page <n>', 'page number (default 1)', wholeNumber('--page', 1))
    .option('--page-size <n>', `records per page, 1-5000 (default 100; ${ALL_PAGE_SIZE} with --all)`, wholeNumber('--page-size', 1))
    .option('--all', 'every page, following _links.next')
    .addHelpText('after', examples(
      'ferry companies list --query "name~Acme" --order-by -created',
      'ferry companies list --all | cut -f1            # every id, one per line',
      'ferry companies list --all --json | jq length   # --all --json is an array; without --all, the page envelope',
    ))
    .action(registrar.action(runCompaniesList));
}

export async function runCompaniesList(options: CompaniesListOptions, ctx: CommandContext): Promise<void> {
  if (options.all && options.page !== undefined) throw new UsageError('--page and --all do not go together.', '--all starts at page 1 and follows every next page; drop --page.');
  if (options.pageSize !== undefined && options.pageSize > 5000) throw new UsageError(`--page-size ${options.pageSize} is over 5000, the most the service returns per page.`);
  const { client } = await ctx.connect();
  const query = {
    query: options.query,
    orderBy: options.orderBy,
    page: options.page,
    pageSize: options.pageSize ?? (options.all ? ALL_PAGE_SIZE : undefined),
  };
  const { io } = ctx;
  if (!options.all) {
    const page = await api.companiesPage(client, query, ctx.signal);
    printResult(io, page, () => {
      printTable(io, page.results, COMPANY_COLUMNS);
      pageFooter(io, page);
    });
    return;
  }
  await listAll(api.companyPages(client, query, ctx.signal), ctx);
}

async function listAll(pages: AsyncGenerator<Page<CompanyRecord>>, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const { startProgress } = await import('../../progress.js');
  const { rateLine } = await import('../../../ops/progress.js');
  const progress = await startProgress(io, 'Listing companies…');
  const started = Date.now();
  const kept: CompanyRecord[] = [];
  let count = 0;
  try {
    for await (const page of pages) {
      if (signal.aborted) throw new InterruptedError();
      count += page.results.length;
      // Piped output streams page by page; a terminal table and a JSON array need every row first.
      if (io.mode === 'plain') printTable(io, page.results, COMPANY_COLUMNS);
      else kept.push(...page.results);
      progress.update(rateLine(count, page.totalResults, started, 'companies'));
    }
  } catch (err) {
    progress.fail();
    if (signal.aborted) throw new InterruptedError(`Stopped after ${count} companies.`);
    throw err;
  }
  if (io.mode === 'json') {
    progress.done();
    io.json(kept);
    return;
  }
  if (io.mode === 'tty') {
    // The spinner's last line goes before the table, so the table is what stays on screen.
    progress.done(`${count} ${count === 1 ? 'company' : 'companies'}`);
    printTable(io, kept, COMPANY_COLUMNS);
    return;
  }
  progress.done(`${count} ${count === 1 ? 'company' : 'companies'}`);
}

function pageFooter(io: IO, page: Page<CompanyRecord>): void {
  const pages = Math.max(1, Math.ceil(page.totalResults / page.pageSize));
  const noun = page.totalResults === 1 ? 'company' : 'companies';
  if (page.results.length === 0 && page.pageNumber > 1) {
    io.err(`Page ${page.pageNumber} is past the end: ${formatCount(page.totalResults)} ${noun} make ${pages} page${pages === 1 ? '' : 's'} of ${page.pageSize}.`);
    return;
  }
  const next = page._links.next ? ` Next: --page ${page.pageNumber + 1}, or --all for every page.` : '';
  io.err(`Page ${page.pageNumber} of ${pages} (${formatCount(page.totalResults)} ${noun}).${next}`);
}
