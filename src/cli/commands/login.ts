// `ferry login`: save a target (base URL, API key, optional client) as a profile in
// $XDG_CONFIG_HOME/ferry/config.json (0600). The key comes from stdin or a hidden
// prompt, never from a flag (flags leak into `ps` and shell history).
import { printResult } from '../io.js';
import * as api from '../../client/api.js';
import type { ProfileRecord } from '../../client/wire.js';
import type { Command } from 'commander';
import { text } from 'node:stream/consumers';
import { readConfig, writeConfig } from '../config.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { ask } from '../prompt.js';
import { examples, type Registrar } from '../command.js';

export function register(program: Command, registrar: Registrar): void {
  program.command('login')
    .description('Save a remote target and its API key as a profile')
    .addHelpText('after', examples(
      'ferry login --base-url https://ferry.example.com              # prompts for the key',
      'ferry login --profile staging --base-url http://10.0.0.5:8080 < staging.key',
      'ferry --profile staging companies list',
    ))
    .addHelpText('after', `Uses the global options: --base-url (asked for when missing), --profile (default "default") and
--client. The key is read from stdin when it is piped in, otherwise from a hidden prompt; it is
checked against the service before it is saved (config file mode 0600).
`)
    .action(registrar.action(runLogin));
}

export async function runLogin(_options: object, ctx: CommandContext): Promise<void> {
  const { io, flags } = ctx;
  const baseUrl = flags.baseUrl ?? io.env.FERRY_BASE_URL ?? (await ask(io, { flag: '--base-url', message: 'Base URL of the service' }, ctx.signal));
  const name = flags.profile ?? 'default';
  const apiKey = (io.stdin as NodeJS.ReadStream).isTTY
    ? await ask(io, { flag: 'the key on stdin', message: 'API key', secret: true }, ctx.signal)
    : (await text(io.stdin)).trim();
  if (!apiKey) throw new UsageError('No API key was given.', 'Pipe it in (ferry login --base-url URL < key.txt) or type it at the prompt.');

  // Check the key before saving it: a typo found now beats a 401 in the middle of a migration.
  const { ApiClient } = await import('../../client/client.js');
  const client = new ApiClient({ baseUrl, apiKey, ...(flags.client ? { clientId: flags.client } : {}), maxRetries: 1 });
  let profile: ProfileRecord;
  try {
    profile = await api.profile(client);
  } finally {
    await client.close();
  }
  const config = readConfig(io.env);
  config.profiles[name] = { baseUrl, apiKey, ...(flags.client ? { clientId: flags.client } : {}) };
  config.defaultProfile ??= name;
  const file = writeConfig(io.env, config);
  printResult(io, { profile: name, baseUrl, clientId: profile.clientId, name: profile.name, plan: profile.plan, isAdmin: profile.isAdmin, config: file }, () => {
    io.err(`Logged in to ${baseUrl} as ${profile.name} (${profile.plan}${profile.isAdmin ? ', admin' : ''}). Saved as profile "${name}" in ${file}.`);
    if (config.defaultProfile === name) io.err('It is the default profile: commands use it unless --base-url, FERRY_BASE_URL or --profile say otherwise.');
    else io.err(`Use it with --profile ${name}.`);
  });
}
