// The managed migration's plan file: the single source of truth for one migration
// (platform, client, contacts, schedule, company list, the six steps' states, and each
// company's outcome). Every command rereads it and writes it whole (temp + rename), so
// work can stop at any point and go on later, on another machine. Tokens never enter it:
// the company CSV stays where it is and the plan records only its path and fingerprint.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputError } from '../errors.js';
import { replaceFile } from '../../lib/atomic-file.js';

export const PLAN_TEMPLATE = fileURLToPath(new URL('../../../templates/managed/plan.json', import.meta.url));
export const DEFAULT_PLAN_FILE = 'ferry-plan.json';

export type StepState = 'pending' | 'done' | 'failed';
export type StepNumber = 1 | 2 | 3 | 4 | 5 | 6;
export const STEP_NUMBERS: StepNumber[] = [1, 2, 3, 4, 5, 6];

export interface PlanStep {
  step: StepNumber;
  name: string;
  title: string;
  state: StepState;
  /** When the step was last done or failed (ISO 8601). */
  at: string | null;
  /** Who confirmed it (--by, or FERRY_USER). */
  by: string | null;
  notes: string;
  /** What to do about a failed step (absent otherwise). */
  hint?: string;
  /** Steps 5 and 6 while they run (absent otherwise). */
  progress?: StepProgress;
}

/**
 * How far a running step 5 or 6 has got, saved in the plan as it goes (at most every
 * 500 ms while migrating, with each company's outcome while checking), so that another
 * process (`ferry managed status --watch`) can follow it. Removed when the run ends.
 */
export interface StepProgress {
  phase: 'holding-back' | 'migrating' | 'checking';
  /** The step's companies, those that passed in an earlier run included. */
  total: number;
  /** Passed in an earlier run: not migrated or checked again (counted as checked and passed). */
  earlier: number;
  heldBack: number;
  /** Companies the bulk engine works on in this run, and how many it has finished. */
  toMigrate: number;
  migrated: number;
  migrationFailed: number;
  /** Companies with an outcome (held back and failed migrations count as checked and failed). */
  checked: number;
  passed: number;
  failed: number;
  by: string;
  startedAt: string;
  updatedAt: string;
  /** The process doing the step, so a reader on the same host can tell a killed run from a live one. */
  pid: number;
  host: string;
}

export interface Contact {
  name: string;
  email: string;
}

export interface PilotRef {
  /** CSV row number (the header is row 1). */
  row: number;
  key: string;
  externalId?: string;
  companyName?: string;
}

export type CriterionVerdicts = Partial<Record<'connection' | 'sync' | 'authorization' | 'reads', 'pass' | 'fail' | 'skipped'>>;

/** One company's outcome, for the handover report. */
export interface CompanyOutcome {
  row: number;
  /** The row's ferryKey (ext:<externalId>, or the name and platform). */
  key: string;
  externalId?: string;
  companyName: string;
  companyId?: string;
  connectionId?: string;
  pilot: boolean;
  /** migrated / skipped (already migrated) / failed (the migration step failed) / not-imported (held back). */
  migration: 'migrated' | 'skipped' | 'failed' | 'not-imported';
  /** When the connection was created by the migration (the service's connection.created). */
  migratedAt?: string;
  verdict: 'pass' | 'fail';
  reasons: string[];
  criteria?: CriterionVerdicts;
  checkedAt?: string;
  durations: { syncSeconds?: number; checkSeconds?: number };
  records?: number;
}

export interface Plan {
  ferryManagedPlan: 1;
  client: { id: string; name: string };
  platform: { key: string; name: string; migrationRoute: string; appClientId: string };
  contacts: Contact[];
  schedule: { date: string };
  service: { baseUrl: string; callbackUrl: string };
  /**
   * The service the plan was made against, so that the commands it prints reach it: the
   * embedded one's data dir (relative to the plan's folder, as the company file) or a remote
   * base URL, with the --profile or --api-key-file (relative too) that gave its key on the
   * command line: a key from the environment or the default profile comes along by itself.
   * Absent in plans written before it was recorded.
   */
  target?: PlanTarget;
  companies: { file: string; fingerprint: string; count: number; pilot: PilotRef | null };
  steps: PlanStep[];
  outcomes: CompanyOutcome[];
  report: { dir: string; files: string[]; at: string } | null;
  created: string;
  updated: string;
}

export type PlanTarget = { dataDir: string } | { baseUrl: string; profile?: string; apiKeyFile?: string };

export function templatePlan(): Plan {
  return JSON.parse(readFileSync(PLAN_TEMPLATE, 'utf8')) as Plan;
}

/** A new plan from the template, for a client and a platform, written to `path`. */
export function startPlan(
  path: string, start: { client: { id: string; name: string }; platform: string; appClientId?: string; companies?: string; target?: PlanTarget }, now: Date = new Date(),
): Plan {
  const plan = templatePlan();
  if (start.target) plan.target = storedTarget(path, start.target);
  plan.client = start.client;
  plan.platform.key = start.platform.trim().toLowerCase();
  if (start.appClientId) plan.platform.appClientId = start.appClientId.trim();
  if (start.companies) plan.companies.file = storedCompaniesPath(path, start.companies);
  plan.created = now.toISOString();
  writePlan(path, plan, now);
  return plan;
}

export function planPathOf(file: string | undefined): string {
  return resolve(file ?? DEFAULT_PLAN_FILE);
}

export function readPlan(path: string): Plan {
  if (!existsSync(path)) {
    throw inputError(`No plan file at ${path}.`, 'Start one with: ferry managed init --platform KEY --client ID --name NAME (or give --file PATH).');
  }
  let plan: Plan;
  try {
    plan = JSON.parse(readFileSync(path, 'utf8')) as Plan;
  } catch (err) {
    throw inputError(`${path} is not valid JSON (${(err as Error).message}).`, 'Fix the file, or start again with ferry managed init --force.');
  }
  if (plan?.ferryManagedPlan !== 1 || !Array.isArray(plan.steps) || plan.steps.length !== 6) {
    throw inputError(`${path} is not a ferry managed-migration plan.`, 'Give the plan written by ferry managed init (--file PATH).');
  }
  plan.outcomes ??= [];
  plan.contacts ??= [];
  return plan;
}

export function writePlan(path: string, plan: Plan, now: Date = new Date()): void {
  plan.updated = now.toISOString();
  mkdirSync(dirname(path), { recursive: true });
  replaceFile(path, `${JSON.stringify(plan, null, 2)}\n`);
}

export function stepOf(plan: Plan, n: StepNumber): PlanStep {
  return plan.steps.find((s) => s.step === n)!;
}

/** The first step not done (a failed one included), or undefined when all six are done. */
export function nextStep(plan: Plan): PlanStep | undefined {
  return plan.steps.find((s) => s.state !== 'done');
}

/** The company CSV, resolved against the plan's folder (the plan stores it relative to that folder). */
export function companiesPath(planPath: string, plan: Plan): string {
  return resolve(dirname(planPath), plan.companies.file);
}

/** The target as the plan keeps it: its files relative to the plan's folder. */
function storedTarget(planPath: string, target: PlanTarget): PlanTarget {
  if ('dataDir' in target) return { dataDir: storedCompaniesPath(planPath, target.dataDir) };
  return { ...target, ...(target.apiKeyFile ? { apiKeyFile: storedCompaniesPath(planPath, target.apiKeyFile) } : {}) };
}

export function storedCompaniesPath(planPath: string, file: string): string {
  const absolute = resolve(file);
  const rel = relative(dirname(planPath), absolute);
  // Relative, so a folder copied to another machine keeps working; absolute only across drives.
  return isAbsolute(rel) ? absolute : rel;
}

/** Beside the plan: <plan>.work/ holds the validation results, the pilot's and the migration's results and journals. */
export function workDir(planPath: string): string {
  const dir = join(dirname(planPath), `${basename(planPath, extname(planPath))}.work`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function defaultReportDir(planPath: string): string {
  return join(dirname(planPath), `${basename(planPath, extname(planPath))}-report`);
}

export async function fingerprint(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const EMAIL = '[^<>\\s@"]+@[^<>\\s@"]+\\.[^<>\\s@"]+';
const NAMED = new RegExp(`^\\s*([^<>]+?)\\s*<\\s*(${EMAIL})\\s*>\\s*$`);
const BARE = new RegExp(`^\\s*(?:(${EMAIL})|<\\s*(${EMAIL})\\s*>)\\s*$`);

/** `Name <email>`, or a bare e-mail (`ops@acme.example`), stored with an empty name rather than a made-up one. */
export function parseContact(text: string): Contact | undefined {
  const named = NAMED.exec(text);
  // "Jo Bloggs" <jo@…>, as mail programs quote names, is Jo Bloggs.
  if (named) return { name: named[1]!.replace(/^"(.*)"$/, '$1').trim(), email: named[2]! };
  const bare = BARE.exec(text);
  return bare ? { name: '', email: (bare[1] ?? bare[2])! } : undefined;
}

/** `Name <email>`, or the e-mail alone when no name was given. */
export function contactText(contact: Contact): string {
  return contact.name ? `${contact.name} <${contact.email}>` : contact.email;
}

/** The command that does a step, with the flags it still needs. */
export function stepCommand(plan: Plan, step: PlanStep, planFlag: string): string {
  const parts = ['ferry managed step', String(step.step), '--confirm'];
  if (step.step === 1) {
    if (!plan.platform.key) parts.push('--platform KEY');
    if (!plan.platform.appClientId) parts.push('--app-client-id ID');
    if (!plan.companies.file) parts.push('--companies FILE.csv');
  }
  if (step.step === 2) {
    if (!plan.schedule.date) parts.push('--date YYYY-MM-DD');
    if (plan.contacts.length === 0) parts.push('--contact "Name <email>"');
  }
  if (planFlag) parts.push(planFlag);
  return parts.join(' ');
}

/** A word as a POSIX shell reads it back unchanged: quoted when it must be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** A path as a person in `cwd` types it: relative below cwd, absolute elsewhere, shell-quoted when it must be. */
function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return shellWord(rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel);
}

/**
 * `--file PATH` when the plan is not ./ferry-plan.json, and the plan's target (its data dir
 * or base URL) when it recorded one: printed commands reach the plan and its service as they are.
 */
export function planFlag(planPath: string, cwd: string = process.cwd(), plan?: Plan): string {
  const file = planPath !== resolve(cwd, DEFAULT_PLAN_FILE) ? `--file ${shownPath(planPath, cwd)}` : '';
  return [file, plan ? planTargetFlag(planPath, plan, cwd) : ''].filter(Boolean).join(' ');
}

/**
 * `--data-dir DIR`, `--profile NAME` or `--base-url URL [--api-key-file FILE]`: the plan's
 * service, for any command about it (ferry sandbox apps list, say); '' when unrecorded.
 */
export function planTargetFlag(planPath: string, plan: Plan, cwd: string = process.cwd()): string {
  const target = plan.target;
  if (!target) return '';
  if ('dataDir' in target) return `--data-dir ${shownPath(resolve(dirname(planPath), target.dataDir), cwd)}`;
  // A profile names the URL and its key together.
  if (target.profile) return `--profile ${shellWord(target.profile)}`;
  const key = target.apiKeyFile ? ` --api-key-file ${shownPath(resolve(dirname(planPath), target.apiKeyFile), cwd)}` : '';
  return `--base-url ${shellWord(target.baseUrl)}${key}`;
}
