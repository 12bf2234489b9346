// `ferry demo --managed`: a managed migration of 20 companies rehearsed on the embedded
// service for a managed-only platform, one company held back because its legacy
// application refreshed after step 4, within its one-minute budget. Without a terminal
// (each step `ferry managed step N --confirm`, in this process), and as the binary in
// child processes: kept with --data-dir (--json, and the commands it and the README
// suggest run as written, from the directory they name paths relative to), and on a
// pseudo-terminal (script(1)) answering the real prompts of `ferry managed run`. Its
// refusals are in demo-managed.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, FERRY_BIN, runPrinted, type RunResult } from '../helpers/cli.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { ANSI, BUDGET_MS, COMPANIES, HELD_BACK, expectStages, spoiledCompany, stageHeadings } from './demo-managed-support.js';

/** `ferry ARGS` in `cwd` (the commands shown to a user name paths relative to where they run). */
function ferryIn(cwd: string, args: string[], timeoutMs = BUDGET_MS): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Who confirms: the support person's name, once in their environment.
    const child = spawn(process.execPath, [FERRY_BIN, ...args], { cwd, env: cleanEnv({ FERRY_USER: 'Sam Support' }), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end();
  });
}

/** A command line as shown to a user (no quoting in these), without its trailing comment, as argv after `ferry`. */
function argsOf(line: string): string[] {
  const words = line.replace(/\s+#.*$/, '').trim().split(/\s+/);
  expect(words[0]).toBe('ferry');
  return words.slice(1);
}

describe('ferry demo --managed', () => {
  const work = tempDir('ferry-demo-managed-');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('without a terminal: every stage as ferry managed step N --confirm, one company held back and why, what to try next, temp dir removed, within a minute', async () => {
    const started = Date.now();
    const result = await ferry(['demo', '--managed']);
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(elapsed).toBeLessThan(BUDGET_MS);
    const { stderr, stdout } = result;
    expectStages(stderr);
    // What each stage stands for, as it would run: with the data dir of the rehearsal's service.
    for (let n = 1; n <= 6; n += 1) expect(stderr).toMatch(new RegExp(`^  \\$ ferry managed step ${n} --confirm .*--file \\S+plan\\.json --data-dir \\S+$`, 'm'));
    expect(stderr).toMatch(/^ {2}\$ ferry managed step 2 --confirm --date \d{4}-\d\d-\d\d --contact "Jo Bloggs <jo@acme\.example>" --file /m);
    expect(stderr).toMatch(/^ {2}\$ ferry --data-dir \S+ sandbox apps create --platform qhyg --name "Acme Accounting \(rehearsal\) app" --callback-url http:\/\/127\.0\.0\.1:\d+\/callback\/qhyg$/m);
    const spoiled = spoiledCompany(stderr);

    // The summary: what happened, the failure and why, where the report is, what to try next.
    expect(stderr).toMatch(new RegExp(`Done in [\\d.]+s: ${COMPANIES} QuickBooks Online companies through the six steps; ${COMPANIES - 1} passed the end-to-end check, 1 failed\\.`));
    const held = new RegExp(`^ {2}Held back: (.+) \\(row (\\d+)\\): (.+)$`, 'm').exec(stderr);
    expect(held?.[1]).toBe(spoiled.name);
    expect(held?.[2]).toBe(String(COMPANIES + 1));
    expect(held?.[3]).toMatch(HELD_BACK);
    expect(stderr).toMatch(/Try next:\n {2}ferry demo --managed --data-dir \.\/rehearsal .*\n {2}ferry managed status --file rehearsal\/managed\/plan\.json\n {2}ferry managed report --file rehearsal\/managed\/plan\.json /);
    expect(stdout).toMatch(new RegExp(`^companies\\t${COMPANIES}$`, 'm'));
    expect(stdout).toMatch(new RegExp(`^passed\\t${COMPANIES - 1}$`, 'm'));
    expect(stdout).toMatch(/^failed\t1$/m);
    expect(stdout).toContain(`held back\t${spoiled.name}\n`);
    expect(stdout).toMatch(/^report\t.+\/managed\/plan-report\/report\.html \(removed\)$/m);
    const dataDir = /^data dir\t(.+) \(removed\)$/m.exec(stdout)?.[1];
    expect(dataDir).toBeDefined();
    expect(existsSync(dataDir!)).toBe(false);
  }, BUDGET_MS + 10_000);

  it('--data-dir keeps the plan, company file and report; --json is the summary; every command it suggests works as written', async () => {
    const cwd = join(work, 'kept');
    mkdirSync(cwd, { recursive: true });
    const started = Date.now();
    const result = await ferryIn(cwd, ['demo', '--managed', '--data-dir', './kept', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(BUDGET_MS);
    expect(result.stderr).not.toContain('[1/10]'); // --json: the stages stay quiet
    const summary = JSON.parse(result.stdout);
    const dataDir = join(cwd, 'kept');
    const plan = join(dataDir, 'managed', 'plan.json');
    expect(summary).toMatchObject({
      dataDir, kept: true, interactive: false, platform: 'qhyg', companies: COMPANIES, plan,
      companiesFile: join(dataDir, 'managed', 'companies.csv'), passed: COMPANIES - 1, failed: 1,
      client: { name: 'Acme Accounting (rehearsal)' },
      report: { verdict: 'fail', html: join(dataDir, 'managed', 'plan-report', 'report.html') },
    });
    expect(summary.appClientId).toMatch(/^[0-9A-F]{32}$/);
    expect(summary.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\/qhyg$/);
    expect(summary.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'failed']);
    // Confirmed by the person running the rehearsal (their FERRY_USER); 'ferry demo' without one.
    expect(summary.steps.every((s: { by: string }) => s.by === 'Sam Support')).toBe(true);
    expect(summary.stages).toHaveLength(10);
    expect(summary.heldBack).toHaveLength(1);
    const [held] = summary.heldBack;
    expect(held.row).toBe(COMPANIES + 1);
    expect(held.reasons.join('; ')).toMatch(HELD_BACK);
    expect(summary.seconds).toBeGreaterThan(0);

    // The plan and the handover report say the same, for the same company.
    const report = JSON.parse(readFileSync(summary.report.json, 'utf8'));
    expect(report.summary).toMatchObject({ companies: COMPANIES, checked: COMPANIES, passed: COMPANIES - 1, failed: 1 });
    const failedRow = report.companies.filter((c: { verdict: string }) => c.verdict === 'fail');
    expect(failedRow).toHaveLength(1);
    expect(failedRow[0]).toMatchObject({ companyName: held.companyName, externalId: held.externalId, migration: 'not-imported' });
    const html = readFileSync(summary.report.html, 'utf8');
    expect(html).toMatch(HELD_BACK);
    expect(readFileSync(summary.report.markdown, 'utf8')).toMatch(HELD_BACK);

    // No token of the company file reached the summary or the plan.
    const csv = readFileSync(summary.companiesFile, 'utf8').trim().split('\n');
    const header = csv[0]!.split(',');
    const tokens = csv.slice(1).flatMap((line) => header.map((name, i) => (/token/i.test(name) ? line.split(',')[i]! : '')).filter((t) => t.length > 8));
    expect(tokens.length).toBeGreaterThan(0);
    for (const text of [result.stdout, result.stderr, readFileSync(plan, 'utf8')]) for (const token of tokens) expect(text).not.toContain(token);

    // What to try next, each run exactly as shown, from the same directory.
    const next: string[] = summary.next;
    expect(next[0]).toMatch(/^ferry managed status --file kept\/managed\/plan\.json /);
    expect(next[1]).toMatch(/^ferry managed report --file kept\/managed\/plan\.json /);
    // The plan records the data dir it was made against: every command it prints names it.
    expect(next[2]).toMatch(/^ferry managed step 6 --confirm --file kept\/managed\/plan\.json --data-dir kept /);
    expect(next[3]).toMatch(/^ferry --data-dir kept --client [0-9a-f-]{36} check [0-9a-f-]{36} /);
    const status = await ferryIn(cwd, argsOf(next[0]!));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^step\t6\tmigrate-and-hand-over\tfailed\t/m);
    expect(status.stdout).toMatch(/^next\t6\tferry managed step 6 --confirm --file kept\/managed\/plan\.json --data-dir kept$/m);
    // Without the data dir, a step says which service the plan was made against and how to reach it.
    const elsewhere = await ferryIn(cwd, ['managed', 'step', '6', '--confirm', '--file', 'kept/managed/plan.json'], 30_000);
    expect(elsewhere.code, elsewhere.stderr).toBe(2);
    expect(elsewhere.stderr).toContain('error: This plan was made against the embedded service in kept; this command would use the embedded service in ');
    expect(elsewhere.stderr).toContain('hint: Run it against the plan\'s service: add --data-dir kept.');
    const printed = /^next\t6\t(.+)$/m.exec(status.stdout)![1]!;
    // "Confirmed by" is a person: with neither --by nor FERRY_USER, and no terminal to ask on, the step refuses naming both.
    const nobody = await runPrinted(printed, { cwd, timeoutMs: 30_000 });
    expect(nobody.code, nobody.stderr).toBe(2);
    expect(nobody.stderr).toContain('error: Step 6 needs --by NAME (or FERRY_USER).');
    // Step 6 again, as status printed it, pasted into a shell: the companies that passed are not checked again; the spoiled one stays held back.
    const again = await runPrinted(printed, { cwd, env: { FERRY_USER: 'Sam Support' }, timeoutMs: BUDGET_MS });
    expect(again.code, again.stderr).toBe(3);
    expect(again.stderr).not.toContain('tightened permissions'); // the first start after the demo: it left its files owner-only, as the data dir is
    expect(again.stderr).toMatch(new RegExp(`${COMPANIES - 2} companies passed in an earlier run: not checked again`));
    expect(again.stderr).toContain(`${held.companyName}: not imported: reauthorization required`);
    const rewritten = await ferryIn(cwd, argsOf(next[1]!));
    expect(rewritten.code, rewritten.stderr).toBe(0);
    expect(rewritten.stdout.split('\n')).toContain(summary.report.html);
    expect(rewritten.stderr).toMatch(new RegExp(`Handover report \\(fail\\): ${COMPANIES - 1} of ${COMPANIES} companies passed, 1 failed`));
    const check = await ferryIn(cwd, argsOf(next[3]!));
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/^company\t[0-9a-f-]{36}\t.+\tpass\t/m);
  }, 3 * BUDGET_MS);

  it("the README's main jobs show the managed rehearsal in three commands that work as written", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = /^## The main jobs\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
    const lines = section.split('\n').filter((l) => /^ferry .*rehearsal/.test(l));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ferry demo --managed /);
    const cwd = join(work, 'readme');
    mkdirSync(cwd, { recursive: true });
    const results: RunResult[] = [];
    for (const line of lines) results.push(await ferryIn(cwd, argsOf(line)));
    for (const [i, r] of results.entries()) expect(r.code, `${lines[i]}\n${r.stderr}`).toBe(0);
    expect(results[0]!.stderr).toMatch(/Held back: .+ \(row 21\): reauthorization required/);
    // The command each stage stands for names the rehearsal's data dir, so it reaches that service as printed.
    const shown = results[0]!.stderr.split('\n').filter((l) => l.startsWith('  $ ferry ')).map((l) => l.slice('  $ '.length));
    expect(shown).toHaveLength(10);
    for (const line of shown) expect(line).toContain(' --data-dir rehearsal');
    for (const line of [shown.find((l) => / sandbox apps create /.test(l))!, shown.find((l) => / managed step 5 /.test(l))!]) {
      const again = await runPrinted(line, { cwd, env: { FERRY_USER: 'Sam Support' }, timeoutMs: 60_000 });
      expect(again.code, `${line}\n${again.stderr}`).toBe(0);
    }
    expect(results[1]!.stdout).toMatch(/^step\t6\tmigrate-and-hand-over\tfailed\t/m);
    const html = results[2]!.stdout.split('\n').find((l) => l.endsWith('report.html'));
    expect(html).toBeDefined();
    expect(readFileSync(html!, 'utf8')).toMatch(HELD_BACK);
  }, 2 * BUDGET_MS);

  const hasScript = spawnSync('script', ['--version']).status === 0;
  /**
   * `ferry ARGS` on a pseudo-terminal (script(1)), in `cwd`, typing each answer once its
   * prompt is on the screen; resolves with the exit code and the screen's text.
   */
  async function onTerminal(cwd: string, args: string[], answers: Array<[string, string]>, env: Record<string, string> = { FERRY_USER: 'Sam Support' }): Promise<{ code: number | null | 'timeout'; text: string }> {
    const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    // A wide terminal, so no prompt is wrapped mid-text.
    const command = `stty cols 200 rows 50; ${[process.execPath, FERRY_BIN, ...args].map(quote).join(' ')}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd, env: cleanEnv({ TERM: 'xterm-256color', ...env }), stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    let ended = false;
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => {
      ended = true;
      resolve(code);
    }));
    const deadline = Date.now() + BUDGET_MS;
    let seen = 0;
    try {
      for (const [prompt, keys] of answers) {
        for (;;) {
          const text = output.replace(ANSI, '');
          const at = text.indexOf(prompt, seen);
          if (at >= 0) {
            seen = at + prompt.length;
            break;
          }
          if (ended || Date.now() > deadline) throw new Error(`prompt "${prompt}" never appeared; the terminal so far:\n${text}`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        // The prompt draws before it reads: let it settle before typing.
        await new Promise((resolve) => setTimeout(resolve, 100));
        child.stdin.write(keys);
      }
      const code = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(1, deadline - Date.now())))]);
      return { code, text: output.replace(ANSI, '').replace(/\r/g, '') };
    } finally {
      if (!ended) child.kill('SIGKILL');
    }
  }

  it.skipIf(!hasScript)('on a terminal (script(1)): the person answers the prompts of ferry managed run, and step 4 needs a yes', async () => {
    const cwd = join(work, 'tty');
    mkdirSync(cwd, { recursive: true });
    const { code, text } = await onTerminal(cwd, ['demo', '--managed', '--data-dir', './tty'], [
      ['Check the platform details and validate the company file?', '\r'],
      ['Go on to step 2?', '\r'],
      ['Record this schedule and these contacts?', '\r'],
      ['Go on to step 3?', '\r'],
      ['Has the client added http://127.0.0.1:', '\r'],
      ['Go on to step 4?', '\r'],
      [`Has the client disabled syncing in its existing application for all ${COMPANIES} companies? (y/N)`, 'y\r'],
      ['Go on to step 5?', '\r'],
      ['Import the pilot company', '\r'],
      ['Go on to step 6?', '\r'],
      [`Migrate the remaining ${COMPANIES - 1} companies, check each, and write the handover report?`, '\r'],
    ]);
    expect(code, text).toBe(0);
    expect(stageHeadings(text)).toHaveLength(10);
    expect(text).not.toContain('$ ferry managed step'); // the person confirms; no --confirm
    expect(text).toContain('ferry managed run --file tty/managed/plan.json --data-dir tty asks them: you answer');
    expect(text).toMatch(/What the client agreed is given as flags: --date \d{4}-\d\d-\d\d --contact "Jo Bloggs <jo@acme\.example>"/);
    spoiledCompany(text);
    expect(text).toMatch(/Held back: .+ \(row 21\): reauthorization required/);
    const plan = JSON.parse(readFileSync(join(cwd, 'tty', 'managed', 'plan.json'), 'utf8'));
    expect(plan.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'failed']);
    expect(plan.steps.every((s: { by: string }) => s.by === 'Sam Support')).toBe(true);
  }, BUDGET_MS + 10_000);

  it.skipIf(!hasScript)("on a terminal: Enter at step 4's question is a no, the rehearsal stops there with what to run to go on, and that command asks who confirms", async () => {
    const cwd = join(work, 'tty-no');
    mkdirSync(cwd, { recursive: true });
    const { code, text } = await onTerminal(cwd, ['demo', '--managed', '--companies', '3', '--data-dir', './tty'], [
      ['Check the platform details and validate the company file?', '\r'],
      ['Go on to step 2?', '\r'],
      ['Record this schedule and these contacts?', '\r'],
      ['Go on to step 3?', '\r'],
      ['Has the client added http://127.0.0.1:', '\r'],
      ['Go on to step 4?', '\r'],
      ['Has the client disabled syncing in its existing application for all 3 companies? (y/N)', '\r'],
    ]);
    expect(code, text).toBe(0);
    expect(text).toContain('Step 4 not confirmed: nothing changed.');
    expect(text).toContain('Stopped after step 3 in ');
    expect(text).not.toContain('Meanwhile');
    expect(text).toContain('ferry managed run --file tty/managed/plan.json --data-dir tty   # go on from step 4\n');
    const plan = JSON.parse(readFileSync(join(cwd, 'tty', 'managed', 'plan.json'), 'utf8'));
    expect(plan.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'pending', 'pending', 'pending']);

    // Later, the command it printed, by someone with neither --by nor FERRY_USER: asked who
    // confirms, so the plan (and the handover report) never says "unknown".
    const later = await onTerminal(cwd, ['managed', 'run', '--file', 'tty/managed/plan.json', '--data-dir', 'tty'], [
      ['"Confirmed by"', 'Ann Example\r'],
      ['for all 3 companies? (y/N)', 'y\r'],
      ['Go on to step 5?', 'n\r'],
    ], {});
    expect(later.code, later.text).toBe(0);
    expect(later.text).toContain('Stopped; ferry managed status shows where the plan is');
    const confirmed = JSON.parse(readFileSync(join(cwd, 'tty', 'managed', 'plan.json'), 'utf8'));
    expect(confirmed.steps[3]).toMatchObject({ state: 'done', by: 'Ann Example' });
    expect(confirmed.steps[4].state).toBe('pending');
  }, 2 * BUDGET_MS + 10_000);
});
