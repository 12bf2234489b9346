// The service a managed plan was made against, and the check that a step reaches that one:
// a step run against another service (the default data dir instead of the rehearsal's, say)
// would look for the plan's client and companies where they are not. The plan records its
// target at `ferry managed init`; the commands it prints repeat it (plan.ts, planFlag).
import { dirname, relative, resolve } from 'node:path';
import { resolveTarget, type GlobalFlags } from '../globals.js';
import { UsageError } from '../errors.js';
import { planTargetFlag, type Plan, type PlanTarget } from '../../ops/managed/plan.js';

/**
 * What the flags and environment point at, with the flag that gave a remote one its key (a
 * key from the environment or the default profile comes along by itself); undefined when
 * they point nowhere usable yet (a base URL without a key).
 */
export function planTargetOf(flags: GlobalFlags, env: NodeJS.ProcessEnv): PlanTarget | undefined {
  try {
    const spec = resolveTarget(flags, env);
    if (spec.kind === 'embedded') return { dataDir: resolve(spec.dataDir) };
    if (flags.profile) return { baseUrl: spec.baseUrl, profile: flags.profile };
    return { baseUrl: spec.baseUrl, ...(flags.apiKeyFile ? { apiKeyFile: resolve(flags.apiKeyFile) } : {}) };
  } catch {
    return undefined;
  }
}

function describe(target: PlanTarget, cwd: string): string {
  if ('baseUrl' in target) return target.baseUrl;
  const rel = relative(cwd, target.dataDir);
  return `the embedded service in ${rel === '' ? '.' : rel.startsWith('..') ? target.dataDir : rel}`;
}

/** Refuses to run a step of the plan at `planPath` against another service than the plan's own. */
export function checkPlanTarget(plan: Plan, planPath: string, flags: GlobalFlags, env: NodeJS.ProcessEnv, cwd: string = process.cwd()): void {
  const recorded = plan.target;
  if (!recorded) return;
  const planTarget: PlanTarget = 'dataDir' in recorded ? { dataDir: resolve(dirname(planPath), recorded.dataDir) } : recorded;
  const now = planTargetOf(flags, env);
  if (!now) return; // resolving the target fails on its own, with its own words
  const same = 'dataDir' in planTarget ? 'dataDir' in now && now.dataDir === planTarget.dataDir : 'baseUrl' in now && sameUrl(now.baseUrl, planTarget.baseUrl);
  if (same) return;
  const reach = 'dataDir' in planTarget
    ? `add --data-dir ${describe(planTarget, cwd).replace(/^the embedded service in /, '')}${'baseUrl' in now ? ' and drop --base-url (and FERRY_BASE_URL)' : ''}`
    : `add ${planTargetFlag(planPath, plan, cwd)}${planTarget.profile || planTarget.apiKeyFile ? '' : ' (with its key: --api-key-file, FERRY_API_KEY or a saved --profile)'}`;
  throw new UsageError(
    `This plan was made against ${describe(planTarget, cwd)}; this command would use ${describe(now, cwd)}.`,
    `Run it against the plan's service: ${reach}. ferry managed status prints each step's command with it.`,
  );
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
