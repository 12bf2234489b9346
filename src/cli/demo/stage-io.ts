// What both demos (`ferry demo`, `ferry demo --managed`) show of their stages: each stage's
// own lines as it goes, and its timing in the summary.
import type { IO } from '../io.js';

/** A stage and how long it took. */
export interface StageTiming {
  stage: string;
  seconds: number;
}

/** An IO for the stages: their data output is the demo's business, their progress shows as it goes. */
export function stageIO(io: IO, env: NodeJS.ProcessEnv): IO {
  const silent = io.quiet || io.mode === 'json';
  return {
    ...io,
    env,
    quiet: silent,
    mode: io.mode === 'json' ? 'plain' : io.mode,
    canPrompt: false,
    out: () => {},
    json: () => {},
    err: (line) => {
      if (!silent) io.stderr.write(`${line}\n`);
    },
  };
}
