// Shared by the `ferry managed status` tests: a terminal's screen replayed from its
// output, and plans at step 6 with the counts of a step under way.
import { hostname } from 'node:os';
import { templatePlan, type Plan, type StepProgress } from '../../src/ops/managed/plan.js';

// eslint-disable-next-line no-control-regex
export const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
export const plain = (text: string) => text.replace(ANSI, '');
/** What would clear the whole screen or jump home: a redraw must never need them. */
// eslint-disable-next-line no-control-regex
export const FULL_CLEAR = /\x1b\[[0-3]?J|\x1b\[H|\x1b\[\d*;\d*H|\x1bc/;

/**
 * A terminal's screen after `output`: text overwrites, \r goes to column 0, \n to the next
 * line's start (a terminal's line discipline adds the \r),
 * ESC[nA up n lines, ESC[K clears to the end of the line; colours are dropped.
 */
export function screenOf(output: string): string[] {
  const screen: string[] = [''];
  let row = 0;
  let col = 0;
  // eslint-disable-next-line no-control-regex
  const tokens = output.match(/\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu) ?? [];
  for (const token of tokens) {
    if (token === '\r') col = 0;
    else if (token === '\n') {
      row += 1;
      col = 0;
      screen[row] ??= '';
    } else if (token.startsWith('\x1b[')) {
      const final = token[token.length - 1];
      if (final === 'A') row = Math.max(0, row - Number(token.slice(2, -1) || 1));
      else if (final === 'K') screen[row] = [...screen[row]!].slice(0, col).join('');
      else if (final !== 'm' && final !== 'l' && final !== 'h') throw new Error(`unexpected escape ${JSON.stringify(token)}`);
    } else {
      const chars = [...screen[row]!];
      while (chars.length < col) chars.push(' ');
      chars[col] = token;
      screen[row] = chars.join('');
      col += 1;
    }
  }
  while (screen.length > 0 && screen[screen.length - 1] === '') screen.pop();
  return screen.map((line) => line.trimEnd());
}

/** A plan at step 6: steps 1-5 done by Sam, step 6 as given. */
export function planAt(step6: Partial<Plan['steps'][number]> = {}, outcomes = 0): Plan {
  const plan = templatePlan();
  plan.client = { id: 'c-1', name: 'Acme Accounting' };
  plan.platform = { key: 'qhyg', name: 'QuickBooks Online', migrationRoute: 'managed', appClientId: 'app-1' };
  plan.companies = { file: 'acme.csv', fingerprint: 'f', count: 20, pilot: { row: 2, key: 'ext:t-1', externalId: 't-1', companyName: 'Pilot Co' } };
  plan.schedule.date = '2026-12-01';
  for (const s of plan.steps.slice(0, 5)) Object.assign(s, { state: 'done', at: `2026-11-25T10:0${s.step}:00.000Z`, by: 'Sam Support', notes: `step ${s.step} notes` });
  Object.assign(plan.steps[5]!, step6);
  for (let row = 2; row < 2 + outcomes; row += 1) {
    plan.outcomes.push({ row, key: `ext:t-${row}`, companyName: `Company ${row}`, pilot: row === 2, migration: 'migrated', verdict: row === 7 ? 'fail' : 'pass', reasons: [], durations: {} });
  }
  return plan;
}

export function progress(counts: Partial<StepProgress> = {}): StepProgress {
  return {
    phase: 'checking', total: 19, earlier: 0, heldBack: 0, toMigrate: 19, migrated: 19, migrationFailed: 0, checked: 0, passed: 0, failed: 0,
    by: 'Sam Support', startedAt: '2026-11-25T11:00:00.000Z', updatedAt: '2026-11-25T11:00:01.000Z', pid: process.pid, host: hostname(), ...counts,
  };
}
