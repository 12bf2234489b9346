// Where an interrupted export to a file goes on from: its checkpoint, if the part files
// and the arguments still match; otherwise the old parts go and the export starts afresh.
import { inputError } from '../errors.js';
import { argsDiffer, partLength, readCheckpoint, readCompanies, removeParts, type Checkpoint, type ExportArgs, type PartPaths } from './checkpoint.js';
import type { ExportEnv, ExportPlan } from './types.js';

/** The checkpoint to continue from, or undefined to start afresh (old part files removed). */
export function findResumePoint(plan: ExportPlan, paths: PartPaths, args: ExportArgs, env: ExportEnv): Checkpoint | undefined {
  const existing = readCheckpoint(paths);
  const leftover = existing !== undefined || partLength(paths) >= 0;
  if (!plan.resume) {
    if (leftover) env.note(`Discarding an interrupted export to ${plan.out} (add --resume to continue it instead).`);
    removeParts(paths);
    return undefined;
  }
  if (!existing) {
    env.note(`No interrupted export to ${plan.out} to resume; starting a fresh one.`);
    removeParts(paths);
    return undefined;
  }
  const differ = argsDiffer(existing.args, args);
  if (differ.length > 0) {
    throw inputError(
      `The interrupted export to ${plan.out} was started with different arguments (${differ.join(', ')}), so it cannot be resumed with these.`,
      'Run it again with the same arguments and --resume, or without --resume to start over.',
    );
  }
  const length = partLength(paths);
  if (length < existing.bytes) {
    env.note(`The partial file of the interrupted export is shorter than its checkpoint (${length} < ${existing.bytes} bytes); starting over.`);
    removeParts(paths);
    return undefined;
  }
  if (plan.allCompanies && !readCompanies(paths)) {
    env.note('The company list of the interrupted export is missing; starting over.');
    removeParts(paths);
    return undefined;
  }
  return existing;
}

