// What every managed step receives and returns: the plan and its inputs, how it reaches
// the service, how it tells the person what it is doing, and its result. The runner
// (src/cli/managed/runner.ts) builds the env; the steps know nothing of the
// command line.
import type { Connection } from '../../client/connection.js';
import { counted, type StartProgress } from '../progress.js';
import type { PilotRef, Plan, StepNumber } from './plan.js';

export interface StepInputs {
  platform?: string;
  appClientId?: string;
  companies?: string;
  pilot?: string;
  date?: string;
  contacts?: string[];
  /** Who confirms (--by, or FERRY_USER): the handover report's "Confirmed by"; '' until asked. */
  by: string;
  notes?: string;
  /** Steps 5 and 6: rows migrated and companies checked at once, fixed (--concurrency); learned when absent. */
  concurrency?: number;
  /** Steps 5 and 6: at most this many requests a second (--max-rate). */
  maxRate?: number;
  timeoutMs: number;
  pollMs?: number;
  /** Steps 5 and 6: false waits for the checks' syncs by polling alone, without the event stream. */
  events?: boolean;
  /** Step 6: where the handover report goes (default <plan>-report/ beside the plan). */
  reportDir?: string;
}

export interface StepEnv {
  signal: AbortSignal;
  planPath: string;
  plan: Plan;
  /** Writes the plan as it is now (atomically). */
  save(): void;
  /** The service, acting for the plan's client. */
  connection(): Promise<Connection>;
  /** A line for the person. */
  log(line: string): void;
  /** Shows the progress of long work (migration, checks). */
  progress: StartProgress;
  /**
   * `ferry WORDS` as the person runs it next: a `managed` command gets the plan's flags
   * (--file, and its service), any other the plan's service alone.
   */
  command(words: string): string;
  /** Records the step's state in the plan now (step 6 does, so that its report shows it); the runner does otherwise. */
  record(state: 'done' | 'failed', notes: string, hint?: string): void;
}

export interface StepResult {
  state: 'done' | 'failed';
  notes: string;
  details: Record<string, unknown>;
  /** Failed, but some companies passed (step 6). */
  partial?: boolean;
  hint?: string;
}

/** An answer a step needs that neither the plan nor the flags give. */
export interface MissingInput {
  flag: string;
  message: string;
  kind: 'text' | 'contacts';
  /** Sets the answer on the inputs. */
  set(inputs: StepInputs, value: string | string[]): void;
}

export function missingInputs(step: StepNumber, plan: Plan, inputs: StepInputs): MissingInput[] {
  const missing: MissingInput[] = [];
  if (step === 1) {
    if (!inputs.platform && !plan.platform.key) {
      missing.push({ flag: '--platform KEY', message: 'Platform key (ferry integrations list --route managed)', kind: 'text', set: (i, v) => (i.platform = String(v)) });
    }
    if (!inputs.appClientId && !plan.platform.appClientId) {
      missing.push({ flag: '--app-client-id ID', message: "Client id of the client's OAuth app at the platform (on the sandbox: ferry sandbox apps list)", kind: 'text', set: (i, v) => (i.appClientId = String(v)) });
    }
    if (!inputs.companies && !plan.companies.file) {
      missing.push({ flag: '--companies FILE.csv', message: 'Company CSV (companyName, externalId and the token columns)', kind: 'text', set: (i, v) => (i.companies = String(v)) });
    }
  }
  if (step === 2) {
    if (!inputs.date && !plan.schedule.date) {
      missing.push({ flag: '--date YYYY-MM-DD', message: 'Migration date (YYYY-MM-DD)', kind: 'text', set: (i, v) => (i.date = String(v)) });
    }
    if ((inputs.contacts ?? []).length === 0 && plan.contacts.length === 0) {
      missing.push({ flag: '--contact "Name <email>"', message: 'Contact at the client (Name <email>, or an e-mail)', kind: 'contacts', set: (i, v) => (i.contacts = Array.isArray(v) ? v : [v]) });
    }
  }
  if (!inputs.by) {
    missing.push({ flag: '--by NAME (or FERRY_USER)', message: 'Your name, for the plan\'s and the handover report\'s "Confirmed by"', kind: 'text', set: (i, v) => (i.by = String(v).trim()) });
  }
  return missing;
}

/** What a person confirms (or is asked) before the step runs. */
export function confirmQuestion(step: StepNumber, plan: Plan, callbackUrl?: string): string {
  const companies = plan.companies.count ? counted(plan.companies.count, 'company', 'companies') : 'the companies';
  switch (step) {
    case 1: return 'Check the platform details and validate the company file?';
    case 2: return 'Record this schedule and these contacts?';
    case 3: return callbackUrl
      ? `Has the client added ${callbackUrl} to the callback URLs of its app ${plan.platform.appClientId}?`
      : 'Check the callback URL on the client\'s app?';
    case 4: return `Has the client disabled syncing in its existing application for all ${companies}?`;
    case 5: return `Import the pilot company${plan.companies.pilot ? ` ${pilotLabel(plan.companies.pilot)}` : ''} and run the end-to-end check?`;
    case 6: return `Migrate the remaining ${Math.max(0, plan.companies.count - 1)} companies, check each, and write the handover report?`;
  }
}

export function pilotLabel(pilot: PilotRef): string {
  // Its row, not the platform's tenant id: once migrated the pilot is known by its company id alone.
  return `${pilot.companyName ?? pilot.key} (row ${pilot.row})`;
}

export function failed(notes: string, hint?: string, details: Record<string, unknown> = {}, partial = false): StepResult {
  return { state: 'failed', notes, details, ...(hint ? { hint } : {}), ...(partial ? { partial } : {}) };
}

