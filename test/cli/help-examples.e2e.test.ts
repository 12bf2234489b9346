// `ferry COMMAND --help` of every command in the registry, as the binary prints it: each
// example is a command a person can type, its blanks named in capitals (COMPANY_ID,
// CONSUMER_ID…) rather than an elided id (`5b2c…`) that, pasted, would be sent as it is.
// What follows an example's `#` is a note, free to elide.
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { commandLines } from '../../src/cli/command-index.js';
import { runFerry } from '../helpers/cli.js';

/** The example lines of a help text, without their `$ ` and their `# note`. */
function exampleCommands(help: string): string[] {
  const block = help.split('\nExamples:\n')[1] ?? '';
  return block.split('\n').filter((l) => l.startsWith('  $ ')).map((l) => l.slice('  $ '.length).replace(/\s+# .*$/, ''));
}

describe('--help examples', () => {
  it('name their blanks in capitals, never an elided id, in every command', async () => {
    const limit = pLimit(4);
    const helps = await Promise.all(commandLines().map(({ name }) => limit(async () => ({ name, run: await runFerry([...name.split(' '), '--help']) }))));
    const elided: string[] = [];
    let examples = 0;
    for (const { name, run } of helps) {
      expect(run.code, `ferry ${name} --help: ${run.stderr}`).toBe(0);
      for (const line of exampleCommands(run.stdout)) {
        examples += 1;
        if (line.includes('…')) elided.push(`ferry ${name}: ${line}`);
      }
    }
    expect(examples).toBeGreaterThan(100);
    expect(elided).toEqual([]);
  }, 180_000);
});
