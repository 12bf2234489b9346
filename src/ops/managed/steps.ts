// The six steps of a managed migration, one file each. Every step takes the plan and its
// inputs, does its work against the service (acting for the plan's client) and the
// platform where it can be asked (the sandbox), and returns done or failed with notes.
// The runner records the state and saves the plan; steps 5 and 6 also save each
// company's outcome as it comes, so a killed step 6 resumes where it stopped.
import type { StepNumber } from './plan.js';
import { stepCallbackUrl, stepSyncingDisabled } from './step-callback.js';
import type { StepEnv, StepInputs, StepResult } from './step-env.js';
import { stepMigrateRest } from './step-migrate-rest.js';
import { stepPilot } from './step-pilot.js';
import { stepPlatformDetails } from './step-platform.js';
import { stepSchedule } from './step-schedule.js';

export const STEPS: Record<StepNumber, (env: StepEnv, inputs: StepInputs) => Promise<StepResult>> = {
  1: stepPlatformDetails,
  2: stepSchedule,
  3: stepCallbackUrl,
  4: stepSyncingDisabled,
  5: stepPilot,
  6: stepMigrateRest,
};
