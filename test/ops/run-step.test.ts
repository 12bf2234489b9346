// The managed step engine driven without the command line: answers and confirmations come
// through callbacks, failures are OpErrors, and the plan file records the outcome.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpError } from '../../src/ops/errors.js';
import { readPlan, stepOf, templatePlan, writePlan } from '../../src/ops/managed/plan.js';
import { runPlanStep, type StepHooks } from '../../src/ops/managed/engine.js';
import { silentProgress } from '../../src/ops/progress.js';
import { tempDir } from '../helpers/service.js';

/** A plan whose step 1 is done, so step 2 (schedule) is next; step 2 needs no service. */
function planReadyForStep2(): string {
  const file = join(tempDir('ferry-run-step-'), 'plan.json');
  const plan = templatePlan();
  plan.client = { id: 'c1', name: 'Acme Accounting' };
  Object.assign(stepOf(plan, 1), { state: 'done', at: '2026-11-24T10:00:00Z', by: 'Sam', notes: 'validated' });
  writePlan(file, plan);
  return file;
}

const noService: StepHooks['connectFor'] = () => ({ connect: () => Promise.reject(new Error('no service in this test')), dispose: async () => {} });

function hooks(extra: Partial<StepHooks> = {}): StepHooks & { lines: string[] } {
  const lines: string[] = [];
  return { signal: new AbortController().signal, log: (line) => lines.push(line), progress: silentProgress, connectFor: noService, lines, ...extra };
}

const inputs = { by: 'Sam', concurrency: 1, timeoutMs: 1000 };

describe('runPlanStep without a command line', () => {
  it('with no one to ask, a missing answer is an input error naming its flag, and nothing changes', async () => {
    const file = planReadyForStep2();
    const before = readFileSync(file, 'utf8');
    const err = await runPlanStep(2, { file, inputs: { ...inputs }, confirmed: true, redo: false }, hooks({ noAskReason: ' (no terminal)' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpError);
    expect(err).toMatchObject({ kind: 'input', message: 'Step 2 needs --date YYYY-MM-DD, --contact "Name <email>".' });
    expect((err as OpError).hint).toContain(' (no terminal): ferry managed step 2');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('answers and the confirmation come through the hooks; the plan records the step', async () => {
    const file = planReadyForStep2();
    const asked: string[] = [];
    const questions: string[] = [];
    const h = hooks({
      ask: async (m) => {
        asked.push(m.flag);
        return m.kind === 'contacts' ? ['Jo Bloggs <jo@acme.example>'] : '2026-12-01';
      },
      confirm: async (question) => {
        questions.push(question);
        return true;
      },
    });
    const run = await runPlanStep(2, { file, inputs: { ...inputs }, confirmed: false, redo: false }, h);
    expect(asked).toEqual(['--date YYYY-MM-DD', '--contact "Name <email>"']);
    expect(questions).toEqual(['Record this schedule and these contacts?']);
    expect(run.failure).toBeUndefined();
    expect(run.outcome).toMatchObject({ changed: true, step: { step: 2, state: 'done', by: 'Sam' }, next: { step: 3 } });
    const saved = readPlan(file);
    expect(saved.schedule.date).toBe('2026-12-01');
    expect(saved.contacts).toEqual([{ name: 'Jo Bloggs', email: 'jo@acme.example' }]);
    expect(h.lines).toContain('Step 2: Migration scheduled…');
  });

  it('a step already done changes nothing and says so', async () => {
    const file = planReadyForStep2();
    const h = hooks();
    const run = await runPlanStep(1, { file, inputs: { ...inputs }, confirmed: true, redo: false }, h);
    expect(run.outcome.changed).toBe(false);
    expect(h.lines[0]).toMatch(/^Step 1 \(Platform details supplied\) is already done/);
  });

  it('a "no" to the confirmation is an input error and nothing is recorded', async () => {
    const file = planReadyForStep2();
    const err = await runPlanStep(2, { file, inputs: { ...inputs, date: '2026-12-01', contacts: ['Jo <jo@acme.example>'] }, confirmed: false, redo: false }, hooks({ confirm: async () => false }))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'input', message: 'Step 2 not confirmed: nothing changed.' });
    expect(stepOf(readPlan(file), 2).state).toBe('pending');
  });
});
