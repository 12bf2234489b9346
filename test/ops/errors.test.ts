// Engines throw OpError with a kind; the command line alone turns it into an exit code and words.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor } from '../../src/cli/errors.js';
import { createIO } from '../../src/cli/io.js';
import { reportError } from '../../src/cli/program.js';
import { inputError, interrupted, OpError, type OpErrorKind } from '../../src/ops/errors.js';

describe('OpError kinds on the command line', () => {
  it.each<[OpErrorKind, number]>([
    ['input', EXIT.usage],
    ['failed', EXIT.error],
    ['partial', EXIT.partial],
    ['auth', EXIT.auth],
    ['interrupted', EXIT.interrupted],
  ])('%s exits %i', (kind, code) => {
    expect(exitCodeFor(new OpError('x', kind))).toBe(code);
  });

  it('the helpers make the kinds they name', () => {
    expect(inputError('bad', 'fix it')).toMatchObject({ kind: 'input', hint: 'fix it' });
    expect(interrupted()).toMatchObject({ kind: 'interrupted', message: 'Interrupted.' });
  });

  it('the message and hint are worded for a person, and as JSON with --json', () => {
    const run = (json: boolean) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let text = '';
      stderr.on('data', (d: Buffer) => (text += d.toString()));
      const io = createIO({ stdin: new PassThrough(), stdout, stderr, env: {} } as never, { json });
      reportError(io, new OpError('The company file changed.', 'failed', 'Validate it again.'));
      return text;
    };
    expect(run(false)).toBe('error: The company file changed.\nhint: Validate it again.\n');
    expect(JSON.parse(run(true))).toEqual({ error: { message: 'The company file changed.', exitCode: 1, hint: 'Validate it again.' } });
  });
});
