// `ferry companies create --name N [--description D] [--tag k=v ...]`: one company; its
// id goes to stdout so scripts can capture it.
import { ferryCommand, targetArgs } from '../../command-line.js';
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { examples, group, type Registrar } from '../../command.js';

export interface CompaniesCreateOptions {
  name: string;
  description?: string;
  tag?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, registrar: Registrar): void {
  group(program, 'companies', 'Companies: create, list, show, delete')
    .command('create')
    .description('Create a company and print its id')
    .requiredOption('--name <name>', "company name (letters, digits, spaces and - ' & @ . , ? ! are kept)")
    .option('--description <text>', 'free-text description')
    .option('--tag <key=value>', 'a tag, repeatable (at most 10; keys 1-27 characters)', collect)
    .addHelpText('after', examples(
      'ferry companies create --name "Acme Ltd"',
      'ferry companies create --name "Acme Ltd" --description "Pilot" --tag region=eu --tag crm=000123',
      'ID=$(ferry companies create --name "Acme Ltd")   # stdout is the id alone',
    ))
    .action(registrar.action(runCompaniesCreate));
}

/** `k=v` pairs into a tags object; the value may itself hold `=`. */
export function parseTags(pairs: readonly string[]): Record<string, string> {
  const tags: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) {
      throw new UsageError(`--tag ${JSON.stringify(pair)} is not key=value.`, 'Give each tag as --tag key=value, e.g. --tag region=eu (repeat --tag for more).');
    }
    const key = pair.slice(0, at).trim();
    if (!key) throw new UsageError(`--tag ${JSON.stringify(pair)} has an empty key.`, 'Give each tag as --tag key=value, e.g. --tag region=eu.');
    if (key in tags) throw new UsageError(`--tag ${key} is given twice.`, 'Each tag key may appear once.');
    tags[key] = pair.slice(at + 1);
  }
  return tags;
}

export async function runCompaniesCreate(options: CompaniesCreateOptions, ctx: CommandContext): Promise<void> {
  const tags = parseTags(options.tag ?? []);
  const body: Record<string, unknown> = { name: options.name };
  if (options.description !== undefined) body.description = options.description;
  if (Object.keys(tags).length) body.tags = { ...tags };
  const { client } = await ctx.connect();
  const company = await api.createCompany(client, body, ctx.signal);
  const { io } = ctx;
  printResult(io, company, () => {
    io.out(company.id);
    io.err(`Created company ${company.name} (id ${company.id}).`);
    if (company.name !== options.name.trim()) io.err(`note: the service stored the name as "${company.name}" (it drops characters other than letters, digits, spaces and - ' & @ . , ? !).`);
    io.err(`Next: ${ferryCommand(['connections', 'create', '--company', company.id], targetArgs(ctx.flags))} --platform KEY   # keys: ferry integrations list`);
  });
}
