// The managed migration's plan and steps in-process against a real stack (service, worker
// and sandbox): the plan file, status in every output mode, flags and their errors, the
// callback URL check, a pilot spoiled by the legacy application, the interactive path
// through real prompts on a fake terminal, and the handover report's escaping.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../src/stack.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { sandboxCall } from '../helpers/sync.js';
import { interactive, keyFile, managedFixture, type Fixture } from './helpers.js';
import { startTestStack } from '../helpers/stack.js';

describe('ferry managed (in-process, real stack)', () => {
  const work = tempDir('ferry-managed-steps-');
  let stack: Stack;
  let target: string[];
  const run = (args: string[], options: { env?: Record<string, string>; tty?: boolean } = {}) => ferry([...target, ...args], options);
  const fixtureOf = (name: string, count: number, registerCallback = true): Promise<Fixture> => managedFixture(run, {
    baseUrl: stack.baseUrl, sandboxUrl: stack.sandboxUrl, work, name, count, invoices: 5, registerCallback,
  });
  const planOf = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
  const step = (plan: string, n: number, ...flags: string[]) => run(['managed', 'step', String(n), '--file', plan, '--by', 'Sam', '--poll-ms', '50', ...flags]);
  const init = (plan: string, fixture: Fixture, name: string, ...flags: string[]) => run([
    'managed', 'init', '--platform', 'qhyg', '--client', fixture.clientId, '--name', name, '--companies', fixture.companies, '--file', plan, ...flags,
  ]);
  /** Steps 1-4 done with flags. */
  const throughStep4 = async (plan: string, fixture: Fixture) => {
    for (const [n, flags] of [[1, ['--app-client-id', fixture.appClientId]], [2, ['--date', '2026-12-01', '--contact', 'Jo <jo@acme.example>']], [3, []], [4, []]] as const) {
      const result = await step(plan, n, '--confirm', ...flags);
      expect(result.code, `step ${n}: ${result.stderr}`).toBe(0);
    }
  };

  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir: join(work, 'data'), rateLimit: 0 });
    target = ['--base-url', stack.baseUrl, '--api-key-file', keyFile(work, stack.adminKey)];
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('init writes the plan from the template and refuses to overwrite it', async () => {
    const plan = join(work, 'init', 'plan.json');
    const fixture = await fixtureOf('Init Ltd', 1);
    const noClient = await run(['managed', 'init', '--platform', 'qhyg', '--name', 'X', '--file', plan]);
    expect(noClient.code).toBe(2);
    expect(noClient.stderr).toMatch(/Missing --client ID/);

    const made = await init(plan, fixture, 'Init Ltd', '--json');
    expect(made.code, made.stderr).toBe(0);
    const doc = JSON.parse(made.stdout);
    expect(doc).toMatchObject({ plan, client: { id: fixture.clientId, name: 'Init Ltd' }, platform: { key: 'qhyg' } });
    expect(planOf(plan).steps.map((s: { state: string }) => s.state)).toEqual(Array(6).fill('pending'));
    expect(planOf(plan).companies.file).toBe('../init-ltd.csv');

    const again = await init(plan, fixture, 'Init Ltd');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
    expect((await init(plan, fixture, 'Init Ltd', '--force')).code).toBe(0);

    // Without --name the client's name is looked up.
    const looked = await run(['managed', 'init', '--platform', 'qhyg', '--client', fixture.clientId, '--file', join(work, 'init', 'p2.json')]);
    expect(looked.code, looked.stderr).toBe(0);
    expect(planOf(join(work, 'init', 'p2.json')).client.name).toBe('Init Ltd');
  });

  it('status: a checklist on a terminal (marks with colour, words without), TSV when piped, a document with --json', async () => {
    const plan = join(work, 'status', 'plan.json');
    const fixture = await fixtureOf('Status Ltd', 2);
    expect((await init(plan, fixture, 'Status Ltd')).code).toBe(0);
    expect((await step(plan, 1, '--confirm', '--platform', 'nope', '--app-client-id', fixture.appClientId)).code).toBe(1);

    const colour = await run(['managed', 'status', '--file', plan], { tty: true });
    expect(colour.code).toBe(0);
    expect(colour.stdout).toMatch(/✗ 1 {2}Platform details supplied/);
    expect(colour.stdout).toMatch(/· 2 {2}Migration scheduled/);
    expect(colour.stdout).toMatch(/nope is not a platform of the registry/);
    expect(colour.stdout).toMatch(/Next: step 1, platform details supplied\. It failed: nope is not a platform of the registry\. See the keys with: ferry integrations list --route managed/);
    expect(colour.stdout).toContain(`ferry managed step 1 --confirm --app-client-id ID --file ${plan}`);

    const words = await run(['managed', 'status', '--file', plan], { tty: true, env: { NO_COLOR: '1' } });
    expect(words.stdout).toMatch(/^ {2}failed {2}1 {2}Platform details supplied/m);
    expect(words.stdout).toMatch(/^ {2}pending 2 {2}Migration scheduled/m);
    expect(words.stdout).not.toMatch(/^ {2}[✓✗·] /m);

    const piped = await run(['managed', 'status', '--file', plan]);
    const lines = piped.stdout.trim().split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatch(/^step\t1\tplatform-details\tfailed\t\d{4}-.*Z\tSam\tPlatform details supplied\tnope is not a platform/);
    // The plan recorded the service it was made against and the key file given for it: its commands name them.
    expect(lines[6]).toBe(`next\t1\tferry managed step 1 --confirm --app-client-id ID --file ${plan} ${target.join(' ')}`);

    const json = JSON.parse((await run(['managed', 'status', '--file', plan, '--json'])).stdout);
    expect(json.next).toMatchObject({ step: 1, state: 'failed' });
    expect(json.steps[0]).toMatchObject({ state: 'failed', by: 'Sam' });

    const missing = await run(['managed', 'status', '--file', join(work, 'status', 'none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No plan file at .*none\.json/);
  });

  it('every answer is a flag: missing ones are named, steps go in order, --confirm is required', async () => {
    const plan = join(work, 'flags', 'plan.json');
    const fixture = await fixtureOf('Flags Ltd', 2);
    expect((await init(plan, fixture, 'Flags Ltd')).code).toBe(0);

    const early = await step(plan, 3, '--confirm');
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/Step 3 comes after step 1 \(Platform details supplied\), which is pending/);

    const noApp = await step(plan, 1, '--confirm');
    expect(noApp.code).toBe(2);
    expect(noApp.stderr).toMatch(/Step 1 needs --app-client-id ID/);

    const noConfirm = await step(plan, 1, '--app-client-id', fixture.appClientId);
    expect(noConfirm.code).toBe(2);
    expect(noConfirm.stderr).toMatch(/Step 1 needs --confirm/);

    const runNoInput = await run(['--no-input', 'managed', 'run', '--file', plan]);
    expect(runNoInput.code).toBe(2);
    expect(runNoInput.stderr).toMatch(/Step 1 needs --app-client-id ID.*no prompt without a terminal/s);

    expect((await step(plan, 7, '--confirm')).code).toBe(2);

    // On the sandbox, step 1 looks the app up: an unknown one fails, naming the command that lists the apps.
    const unknownApp = await step(plan, 1, '--confirm', '--app-client-id', 'NO-SUCH-APP');
    expect(unknownApp.code).toBe(1);
    expect(unknownApp.stderr).toContain('error: Step 1 failed: The sandbox has no app NO-SUCH-APP.');
    // Each command in the hint reaches the plan's service: its base URL and key file, recorded at init.
    const at = target.join(' ');
    expect(unknownApp.stderr).toContain(`hint: See the apps with: ferry sandbox apps list --platform qhyg ${at} (or make one: ferry sandbox apps create --platform qhyg ${at}), then: ferry managed step 1 --confirm --app-client-id ID --file ${plan} ${at}`);
    const listed = await run(['sandbox', 'apps', 'list', '--platform', 'qhyg', '--json']);
    expect(JSON.parse(listed.stdout).map((a: { clientId: string }) => a.clientId)).toContain(fixture.appClientId);

    // A file with a bad row fails step 1 with the engine's validation.
    const bad = join(work, 'flags', 'bad.csv');
    const good = readFileSync(fixture.companies, 'utf8').trim().split('\n');
    writeFileSync(bad, `${good[0]}\n${good[1]}\nNo Tokens Ltd,ext-9,qhyg,,,,,\n`);
    const invalid = await step(plan, 1, '--confirm', '--app-client-id', fixture.appClientId, '--companies', bad);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/1 of 2 rows are not valid/);
    expect(invalid.stderr).toMatch(/row 3, accessToken: accessToken is required/);

    // `run --no-input` with the flags does the next step, one only.
    const oneStep = await run(['--no-input', 'managed', 'run', '--file', plan, '--confirm', '--companies', fixture.companies, '--by', 'Sam', '--json']);
    expect(oneStep.code, oneStep.stderr).toBe(0);
    expect(JSON.parse(oneStep.stdout)).toMatchObject({ changed: true, step: { step: 1, state: 'done' }, next: { step: 2 } });

    const two = await step(plan, 2, '--confirm', '--date', 'next tuesday', '--contact', 'Jo <jo@acme.example>');
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/--date next tuesday is not a date/);
    const contact = await step(plan, 2, '--confirm', '--date', '2026-12-01', '--contact', 'just a name');
    expect(contact.code).toBe(2);
    expect(contact.stderr).toContain('--contact "just a name" is neither "Name <email>" nor an e-mail address');
    expect(contact.stderr).toContain('hint: Examples: --contact "Jo Bloggs <jo@acme.example>" or --contact jo@acme.example');

    // --redo: a done step (1-4) done again, e.g. a new date.
    expect((await step(plan, 2, '--confirm', '--date', '2026-12-01', '--contact', 'Jo <jo@acme.example>')).code).toBe(0);
    expect((await step(plan, 2, '--confirm', '--date', '2027-01-15', '--redo')).code).toBe(0);
    expect(planOf(plan).schedule.date).toBe('2027-01-15');
    expect(planOf(plan).contacts).toEqual([{ name: 'Jo', email: 'jo@acme.example' }]);

    // A bare e-mail is a contact with no name, shown as the e-mail; given for a named contact, it keeps the name.
    const bare = await step(plan, 2, '--confirm', '--redo', '--contact', 'ops@example.com', '--contact', 'JO@acme.example', '--json');
    expect(bare.code, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout).step.notes).toBe('2027-01-15 · Jo <JO@acme.example>, ops@example.com');
    expect(planOf(plan).contacts).toEqual([{ name: 'Jo', email: 'JO@acme.example' }, { name: '', email: 'ops@example.com' }]);
  });

  it('step 3 fails until the callback URL is registered on the client\'s app, then passes', async () => {
    const plan = join(work, 'callback', 'plan.json');
    const fixture = await fixtureOf('Callback Ltd', 1, false);
    expect((await init(plan, fixture, 'Callback Ltd', '--app-client-id', fixture.appClientId)).code).toBe(0);
    expect((await step(plan, 1, '--confirm')).code).toBe(0);
    expect((await step(plan, 2, '--confirm', '--date', '2026-12-01', '--contact', 'Jo <jo@acme.example>')).code).toBe(0);
    const url = `${stack.baseUrl}/callback/qhyg`;
    const missing = await step(plan, 3, '--confirm');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error: Step 3 failed: ${url} is not registered on the client's app ${fixture.appClientId}`);
    const command = `ferry sandbox apps callbacks add ${fixture.appClientId} ${url} ${target.join(' ')}`;
    expect(missing.stderr).toContain(`hint: Add it to the sandbox app: ${command}, then run: ferry managed step 3 --confirm --file ${plan} ${target.join(' ')}`);
    expect(planOf(plan).steps[2].state).toBe('failed');

    // The hint's command, as given, registers it.
    const added = await run(command.split(' ').slice(1));
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout.trim()).toBe(url);
    const ok = await step(plan, 3, '--confirm', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ step: { state: 'done' }, details: { callbackUrl: url, checkedWithPlatform: true } });
  });

  it('a pilot fails when the legacy application refreshed a token after syncing was confirmed disabled', async () => {
    const plan = join(work, 'legacy', 'plan.json');
    const fixture = await fixtureOf('Legacy Ltd', 3);
    const name = 'Legacy <b>Partners</b> & "Co"';
    expect((await init(plan, fixture, name)).code).toBe(0);
    await throughStep4(plan, fixture);
    const rows = readFileSync(fixture.companies, 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
    const pilotTenant = rows[0]![1]!;
    const refreshed = await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${pilotTenant}/legacy-refresh`, {});
    expect(refreshed.status).toBe(200);

    const five = await step(plan, 5, '--confirm');
    expect(five.code).toBe(1);
    expect(five.stderr).toMatch(/error: Step 5 failed: pilot .* failed: reauthorization required: the legacy application refreshed the token at \d{4}-\d\d-\d\dT[\d:]+Z, after syncing was confirmed disabled/);
    expect(five.stderr).toMatch(/hint: The client's existing application still refreshes tokens/);
    const after = planOf(plan);
    expect(after.steps[4].state).toBe('failed');
    expect(after.outcomes).toEqual([expect.objectContaining({ pilot: true, migration: 'not-imported', verdict: 'fail', externalId: pilotTenant })]);
    // Nothing was imported for the client.
    const companies = await fetch(`${stack.baseUrl}/companies?pageSize=1`, { headers: { authorization: `Basic ${Buffer.from(stack.adminKey).toString('base64')}`, 'x-client-id': fixture.clientId } });
    expect(((await companies.json()) as { totalResults: number }).totalResults).toBe(0);
    // Step 6 waits for the pilot.
    const six = await step(plan, 6, '--confirm');
    expect(six.code).toBe(2);
    expect(six.stderr).toMatch(/Step 6 comes after step 5 .* which is failed/);

    // The report says so, escaped in every format.
    const report = await run(['managed', 'report', '--file', plan, '--json']);
    expect(report.code, report.stderr).toBe(0);
    const { files, verdict } = JSON.parse(report.stdout);
    expect(verdict).toBe('fail');
    const html = readFileSync(files.html, 'utf8');
    expect(html).toContain('Legacy &lt;b&gt;Partners&lt;/b&gt; &amp; &quot;Co&quot;');
    expect(html).not.toContain('<b>Partners</b>');
    expect(html).toMatch(/reauthorization required: the legacy application refreshed the token/);
    const md = readFileSync(files.markdown, 'utf8');
    expect(md).toContain('Legacy &lt;b&gt;Partners&lt;/b&gt; & "Co"');
    expect(md).toMatch(/\*\*0 of 3 migrated and checked; 1 /);

    // Syncing really disabled now: confirm again, pilot another company, and it passes.
    expect((await step(plan, 4, '--confirm', '--redo')).code).toBe(0);
    const retry = await step(plan, 5, '--confirm', '--pilot', rows[1]![1]!);
    expect(retry.code, retry.stderr).toBe(0);
    const done = planOf(plan);
    expect(done.companies.pilot.externalId).toBe(rows[1]![1]);
    expect(done.outcomes).toEqual([expect.objectContaining({ pilot: true, verdict: 'pass', externalId: rows[1]![1] })]);
  });

  it('managed run walks through the steps with real prompts on a terminal', async () => {
    const plan = join(work, 'run', 'plan.json');
    const fixture = await fixtureOf('Prompt Ltd', 2);
    expect((await init(plan, fixture, 'Prompt Ltd')).code).toBe(0);
    const result = await interactive([...target, 'managed', 'run', '--file', plan, '--by', 'Pat'], [
      { when: "Client id of the client's OAuth app", send: `${fixture.appClientId}\r` },
      { when: 'Check the platform details and validate the company file?', send: 'y\r' },
      { when: 'Go on to step 2?', send: 'y\r' },
      { when: 'Migration date (YYYY-MM-DD)', send: '2026-12-01\r' },
      { when: 'Contact at the client (Name <email>, or an e-mail)', send: 'Jo Bloggs <jo@acme.example>\r' },
      { when: 'Another contact', send: 'ann@acme.example\r' },
      { when: 'Another contact', send: '\r' },
      { when: 'Record this schedule and these contacts?', send: 'y\r' },
      { when: 'Go on to step 3?', send: 'y\r' },
      { when: `Has the client added ${stack.baseUrl}/callback/qhyg to the callback URLs`, send: 'y\r' },
      { when: 'Go on to step 4?', send: 'y\r' },
      { when: 'Has the client disabled syncing in its existing application for all 2 companies?', send: 'n\r' },
    ]);
    expect(result.answered).toBe(12);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/Step 4 not confirmed: nothing changed/);
    const after = planOf(plan);
    expect(after.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'pending', 'pending', 'pending']);
    expect(after.steps[0].by).toBe('Pat');
    expect(after.platform.appClientId).toBe(fixture.appClientId);
    expect(after.contacts).toEqual([{ name: 'Jo Bloggs', email: 'jo@acme.example' }, { name: '', email: 'ann@acme.example' }]);

    // Later, without --by or FERRY_USER: run again (asked who confirms), confirm step 4, stop before the pilot.
    const later = await interactive([...target, 'managed', 'run', '--file', plan], [
      { when: 'Step 4 of 6', send: '' },
      { when: '"Confirmed by"', send: 'Ann\r' },
      { when: 'for all 2 companies?', send: 'y\r' },
      { when: 'Go on to step 5?', send: 'n\r' },
    ]);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stderr).toMatch(/Stopped; ferry managed status shows where the plan is/);
    expect(planOf(plan).steps[3]).toMatchObject({ state: 'done', by: 'Ann' });
  });
});
