// `ferry doctor`: is the target reachable, does the key work, what kind of target it is
// (ferry's own service, or the public API alone) and what that means for each command, is
// the clock right, how much rate-limit headroom is left. Each check says what it found.
import { capabilitiesOf, type TargetKind } from '../../client/capabilities.js';
import { printResult } from '../io.js';
import * as api from '../../client/api.js';
import type { Command } from 'commander';
import chalk from 'chalk';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, exitCodeFor } from '../errors.js';
import { resolveTarget } from '../globals.js';
import { examples, type Registrar } from '../command.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

const MAX_SKEW_SECONDS = 30;

/** What each kind of target means for the commands (docs/cli.md, "Against the real service"). */
const TARGET_NOTES: Record<TargetKind, { detail: string; notes: string[] }> = {
  ferry: {
    detail: "ferry's own service (its integration records carry ferry's fields; its admin routes exist)",
    notes: [
      'migrate, sync, status, export, push, companies, connections, integrations: the public routes only',
      'check and the managed steps also ask the sandbox platforms (legacy refreshes, callback URLs) when the key is an admin key',
      'admin, sandbox, serve and demo: this service\'s own routes',
    ],
  },
  public: {
    detail: 'the public API alone (no ferry fields, no admin routes)',
    notes: [
      'migrate, sync, status, export, push, companies, connections, integrations: work; token fields, routes and data types come from the registry bundled with ferry',
      'check: runs every criterion except the legacy refreshes, which are not checked (the platform cannot be asked)',
      'managed step 3: the callback URL cannot be checked with the platform; the person confirms it (--confirm)',
      'admin and sandbox commands: not offered by this target (ferry\'s own service only)',
    ],
  },
};

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function register(program: Command, registrar: Registrar): void {
  program.command('doctor')
    .description('Check the target, the API key, the clock and the rate-limit headroom')
    .addHelpText('after', examples(
      'ferry doctor',
      'ferry --base-url http://127.0.0.1:8080 --api-key-file admin.key doctor --json',
      'ferry --profile staging doctor -q || exit 1   # a CI pre-flight step',
    ))
    .addHelpText('after', `Exit codes: 0 every check passed · 4 the key was refused · 1 any other failed check.
`)
    .action(registrar.action(runDoctor));
}

export async function runDoctor(_options: object, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  const checks: Check[] = [];
  let cause: unknown;
  let target: { kind: TargetKind; notes: string[] } | undefined;
  const spec = resolveTarget(ctx.flags, io.env);
  checks.push({
    name: 'target',
    ok: true,
    detail: spec.kind === 'remote' ? `${spec.baseUrl} (from ${spec.source})` : `embedded service over ${spec.dataDir}`,
  });
  try {
    const connection = await ctx.connect();
    const started = Date.now();
    const response = await api.profileExchange(connection.client);
    checks.push({ name: 'reachable', ok: true, detail: `${connection.baseUrl} answered in ${Date.now() - started} ms` });
    checks.push({ name: 'auth', ok: true, detail: `key works: ${response.body.name} (${response.body.plan}${response.body.isAdmin ? ', admin' : ''})` });
    const { kind } = await capabilitiesOf(connection.client, ctx.signal);
    target = { kind, notes: TARGET_NOTES[kind].notes };
    checks.push({ name: 'kind', ok: true, detail: TARGET_NOTES[kind].detail });
    const date = Date.parse(header(response.headers, 'date') ?? '');
    const skew = Number.isNaN(date) ? undefined : Math.round((Date.now() - date) / 1000);
    checks.push(skew === undefined
      ? { name: 'clock', ok: true, detail: 'the service sent no Date header' }
      : { name: 'clock', ok: Math.abs(skew) <= MAX_SKEW_SECONDS, detail: Math.abs(skew) <= MAX_SKEW_SECONDS ? `in step with the service (${skew}s)` : `${skew}s apart from the service: fix this machine's clock (token expiry depends on it)` });
    const limit = header(response.headers, 'x-rate-limit-limit');
    const remaining = header(response.headers, 'x-rate-limit-remaining');
    checks.push(limit === undefined
      ? { name: 'rate limit', ok: true, detail: 'no rate limit on this service' }
      : { name: 'rate limit', ok: Number(remaining) > 0, detail: `${remaining}/${limit} requests left in the bucket (refills at ${limit}/s)` });
  } catch (err) {
    cause = err;
    checks.push({ name: 'reachable/auth', ok: false, detail: (err as Error).message });
  }
  const failed = checks.filter((c) => !c.ok);
  printResult(io, { ok: failed.length === 0, checks, ...(target ? { target } : {}) }, () => {
    for (const check of checks) {
      const mark = check.ok ? (io.color ? chalk.green('✓') : 'ok') : io.color ? chalk.red('✗') : 'FAIL';
      io.out(io.mode === 'tty' ? `${mark} ${check.name.padEnd(11)} ${check.detail}` : `${check.ok ? 'ok' : 'fail'}\t${check.name}\t${check.detail}`);
      if (check.name === 'kind' && target) for (const note of target.notes) io.out(io.mode === 'tty' ? `  ${' '.repeat(12)}${note}` : `note\t${note}`);
    }
  });
  // A refused key exits 4, like every other command; other failures exit 1.
  if (failed.length > 0) throw new CliError(`${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.map((c) => c.name).join(', ')}.`, cause ? exitCodeFor(cause) : EXIT.error);
}
