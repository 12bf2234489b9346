// `ferry sandbox settings`: the platforms' latency, fault rate, rate limit and push mode.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';
import { wholeNumber } from '../../flags.js';

export interface SettingsOptions {
  latency?: number;
  faultRate?: number;
  rateLimit?: number;
  pushMode?: 'sync' | 'async';
  pushDelay?: number;
}

function fraction(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('--fault-rate must be a number from 0 to 1.');
  return n;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'sandbox', 'The emulated third-party platforms (admin key)')
    .command('settings')
    .description('Show or change how the sandbox platforms behave')
    .option('--latency <ms>', 'added to every platform request', wholeNumber('--latency', 0))
    .option('--fault-rate <f>', 'fraction of platform requests answered 500/503', fraction)
    .option('--rate-limit <n>', 'requests per second per tenant (0 = none)', wholeNumber('--rate-limit', 0))
    .addOption(new Option('--push-mode <mode>', 'sync: 200/400 at once; async: 202, settled later').choices(['sync', 'async']))
    .option('--push-delay <s>', 'seconds an async push stays pending', wholeNumber('--push-delay', 0))
    .addHelpText('after', examples('ferry sandbox settings', 'ferry sandbox settings --fault-rate 0.05 --rate-limit 5'))
    .action(registrar.action(runSettings));
}

export async function runSettings(options: SettingsOptions, ctx: CommandContext): Promise<void> {
  const { sandboxApi } = await import('../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const changes: Record<string, unknown> = {};
  if (options.latency !== undefined) changes.latencyMs = options.latency;
  if (options.faultRate !== undefined) changes.faultRate = options.faultRate;
  if (options.rateLimit !== undefined) changes.rateLimit = options.rateLimit;
  if (options.pushMode !== undefined) changes.pushMode = options.pushMode;
  if (options.pushDelay !== undefined) changes.pushDelaySeconds = options.pushDelay;
  const settings = Object.keys(changes).length > 0
    ? await sandbox.updateSettings(changes)
    : await sandbox.settings();
  printRecord(ctx.io, settings, Object.entries(settings));
}
