// What an export that did not finish says: how many records it wrote, and how to go on
// (a partial export kept beside --out resumes with --resume; a stream starts again).
import { formatCount } from '../progress.js';

function counted(records: number): string {
  return `${formatCount(records)} record${records === 1 ? '' : 's'} written`;
}

/** The person's own stop (Ctrl-C): `out` undefined for a stream, `kept` when a partial export stays beside it. */
export function stoppedWords(records: number, out: string | undefined, kept: boolean): string {
  if (!out) return `Stopped after ${counted(records)}; the output is incomplete: rerun the same command to export it all.`;
  return kept ? `Stopped after ${counted(records)}; rerun the same command with --resume to continue (the partial export is kept beside ${out}).`
    : `Stopped; nothing was written to ${out}: rerun the same command to start again.`;
}

/** A failure after pages were kept beside `out`. */
export function failedWords(records: number, out: string): string {
  return `${counted(records)} before the failure. The partial export is kept beside ${out}; continue it with the same command and --resume.`;
}
