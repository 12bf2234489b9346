// A whole managed migration of 200 QuickBooks Online companies on the sandbox, every step
// a `ferry managed step N --confirm` CHILD PROCESS against a `ferry serve`: stopped after
// step 3 and resumed from the plan alone; step 6 killed mid-way (SIGKILL) and rerun; the
// handover report checked (Markdown, self-contained HTML, JSON) and no token anywhere.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { managedFixture, spawnFerry, type Fixture } from './helpers.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

const COUNT = 200;

describe('ferry managed: 200 companies end to end in child processes', () => {
  const work = tempDir('ferry-managed-full-');
  const dataDir = join(work, 'data');
  const plan = join(work, 'acme', 'plan.json');
  let serve: ServeProcess;
  let target: string[];
  let fixture: Fixture;
  const ferry = (args: string[], timeoutMs = 120_000) => runFerry([...target, ...args], { timeoutMs });
  const step = (n: number, ...flags: string[]) => ferry(['managed', 'step', String(n), '--confirm', '--file', plan, '--by', 'Sam Support', '--poll-ms', '100', ...flags]);
  const readPlan = () => JSON.parse(readFileSync(plan, 'utf8'));

  beforeAll(async () => {
    serve = await startTestStack('process', { dataDir });
    target = ['--base-url', serve.listening.baseUrl!, '--api-key-file', join(dataDir, 'admin.key')];
    fixture = await managedFixture(ferry, {
      baseUrl: serve.listening.baseUrl!, sandboxUrl: serve.listening.sandboxUrl!, work, name: 'Acme & Sons Accounting', count: COUNT, invoices: 5,
    });
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('runs the six steps, resumes after a stop and after a kill, and hands over a correct report', async () => {
    const init = await ferry(['managed', 'init', '--platform', 'qhyg', '--client', fixture.clientId, '--name', 'Acme & Sons Accounting', '--companies', fixture.companies, '--file', plan]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout.trim()).toBe(plan);

    // Steps 1-3, then stop: everything needed to go on is in the plan file.
    const one = await step(1, '--app-client-id', fixture.appClientId);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^state\tdone$/m);
    expect(readPlan().companies).toMatchObject({ count: COUNT, file: '../acme-sons-accounting.csv', pilot: { row: 2 } });
    const two = await step(2, '--date', '2026-12-01', '--contact', 'Jo Bloggs <jo@acme.example>', '--contact', 'Ann Other <ann@acme.example>');
    expect(two.code, two.stderr).toBe(0);
    const three = await step(3);
    expect(three.code, three.stderr).toBe(0);
    expect(readPlan().service.callbackUrl).toBe(`${serve.listening.baseUrl}/callback/qhyg`);

    // Later (another shell, another day): status says where it is and what to run next.
    const status = await ferry(['managed', 'status', '--file', plan, '--json']);
    expect(status.code).toBe(0);
    const data = JSON.parse(status.stdout);
    expect(data.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'pending', 'pending', 'pending']);
    // The plan names the service it was made against and the key file given for it, so the command reaches it from any shell.
    expect(data.next).toMatchObject({ step: 4, command: `ferry managed step 4 --confirm --file ${plan} ${target.join(' ')}` });
    const before = readFileSync(plan, 'utf8');
    const again = await step(2, '--date', '2027-01-01');
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/Step 2 \(Migration scheduled\) is already done .*nothing changed/);
    expect(readFileSync(plan, 'utf8')).toBe(before);

    const four = await step(4);
    expect(four.code, four.stderr).toBe(0);
    const five = await step(5);
    expect(five.code, five.stderr).toBe(0);
    expect(readPlan().outcomes).toHaveLength(1);
    expect(readPlan().outcomes[0]).toMatchObject({ pilot: true, verdict: 'pass', migration: 'migrated' });

    // Step 6, killed while checking: outcomes so far are in the plan, the rest resumes.
    const six = spawnFerry([...target, 'managed', 'step', '6', '--confirm', '--file', plan, '--by', 'Sam Support', '--poll-ms', '100']);
    await waitFor('step 6 to have checked some companies', async () => {
      if (six.child.exitCode !== null) throw new Error(`step 6 ended before the kill: ${six.stderr()}`);
      try {
        return readPlan().outcomes.length >= 40;
      } catch {
        return false; // the plan is renamed into place: a read never sees half a file, but may race the rename
      }
    }, 120_000, 100);
    six.child.kill('SIGKILL');
    const killed = await six.done;
    expect(killed.signal).toBe('SIGKILL');
    const half = readPlan();
    expect(half.steps[5].state).toBe('pending');
    expect(half.outcomes.length).toBeLessThan(COUNT);

    const rerun = await step(6);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/passed in an earlier run: not checked again/);
    const final = readPlan();
    expect(final.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'done']);
    expect(final.outcomes).toHaveLength(COUNT);
    expect(new Set(final.outcomes.map((o: { row: number }) => o.row)).size).toBe(COUNT);
    expect(final.outcomes.every((o: { verdict: string; companyId?: string; migratedAt?: string }) => o.verdict === 'pass' && o.companyId && o.migratedAt)).toBe(true);

    // Exactly one company per row on the service: nothing duplicated by the kill.
    const key = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const asClient = await fetch(`${serve.listening.baseUrl}/companies?pageSize=1`, { headers: { authorization: `Basic ${Buffer.from(key).toString('base64')}`, 'x-client-id': fixture.clientId } });
    expect(((await asClient.json()) as { totalResults: number }).totalResults).toBe(COUNT);

    // The handover report: three files, the same facts.
    const reportDir = join(work, 'acme', 'plan-report');
    const json = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8'));
    expect(json.verdict).toBe('pass');
    expect(json.summary).toMatchObject({ companies: COUNT, checked: COUNT, passed: COUNT, failed: 0 });
    expect(json.companies).toHaveLength(COUNT);
    expect(json.steps[5].state).toBe('done');
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    expect(md).toContain('**200 of 200 migrated and checked.**');
    expect(md.split('\n').filter((l) => /^\| \d+ \|/.test(l))).toHaveLength(COUNT);
    const html = readFileSync(join(reportDir, 'report.html'), 'utf8');
    // A timeline when the migration took a minute or more; a sentence saying how long when quicker.
    if (Date.parse(json.summary.lastMigratedAt) - Date.parse(json.summary.firstMigratedAt) >= 60_000) expect(html.match(/<circle /g)).toHaveLength(COUNT);
    else expect(html).toContain(`All ${COUNT} companies were migrated within `);
    expect(html).toContain('Acme &amp; Sons Accounting');
    expect(html).not.toContain('Acme & Sons');
    expect(html).not.toMatch(/<script|<link|\bsrc=|url\(/i);
    expect(html.match(/<tr><td class="num">/g)).toHaveLength(COUNT);
    expect(existsSync(join(work, 'acme', 'plan.work', 'migration.results.csv'))).toBe(true);

    // Tokens stay in the company file: never in the plan, the work files' results or the report.
    const csv = readFileSync(fixture.companies, 'utf8').trim().split('\n');
    const header = csv[0]!.split(',');
    const secrets = csv.slice(1, 30).flatMap((line) => {
      const cells = line.split(',');
      return ['accessToken', 'refreshToken'].map((name) => cells[header.indexOf(name)]!);
    });
    for (const text of [readFileSync(plan, 'utf8'), md, html, JSON.stringify(json), readFileSync(join(work, 'acme', 'plan.work', 'migration.results.csv'), 'utf8')]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }

    // A done step 6 says so; status points at the report.
    const status2 = await ferry(['managed', 'status', '--file', plan]);
    expect(status2.stdout).toMatch(/^next\t\topen .*report\.html$/m);
  }, 170_000);
});
