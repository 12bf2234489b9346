// `ferry sandbox apps create|list|callbacks add|remove` against a real `ferry serve` (both
// in this process; the sandbox found through GET /admin/sandbox): the secret shown once,
// every output mode, and the refusals with their exit codes. Then a managed rehearsal's
// steps 1 and 3 with an app made by these commands alone.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';

describe('ferry sandbox apps against a remote ferry serve', () => {
  let serve: ServeHandle;
  let remote: string[];
  const apps = (...args: string[]) => ferry([...remote, 'sandbox', 'apps', ...args]);
  const json = async (...args: string[]) => {
    const result = await ferry([...remote, '--json', 'sandbox', 'apps', ...args]);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout);
  };

  beforeAll(async () => {
    serve = await startTestStack('serve');
    remote = serve.target();
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('create prints the client id and the secret once; list never shows the secret', async () => {
    const made = await apps('create', '--platform', 'qhyg', '--name', 'Acme app', '--callback-url', 'https://acme.example/cb');
    expect(made.code, made.stderr).toBe(0);
    const record = Object.fromEntries(made.stdout.trim().split('\n').map((line) => line.split('\t') as [string, string]));
    expect(record).toMatchObject({ platform: 'qhyg', name: 'Acme app', callbackUrls: 'https://acme.example/cb' });
    expect(record.clientId).toMatch(/^[0-9A-F]{32}$/);
    expect(record.clientSecret).toMatch(/^[\w-]{40,}$/);
    expect(made.stderr).toContain('Its client secret is shown only this once');
    expect(made.stderr).not.toContain(record.clientSecret);
    expect(made.stderr).toContain(`--app-client-id ${record.clientId}`);
    // The next command reaches the same service, and says where its one blank comes from.
    expect(made.stderr).toContain(`Next: ferry ${remote.join(' ')} managed init --platform qhyg --client CLIENT_ID`);
    expect(made.stderr).toContain(`(ferry ${remote.join(' ')} admin clients list lists them)`);

    // The secret is the real one: the platform's token endpoint takes it for this app.
    const basic = Buffer.from(`${record.clientId}:${record.clientSecret}`).toString('base64');
    const wrong = Buffer.from(`${record.clientId}:not-the-secret`).toString('base64');
    const token = (auth: string) => fetch(`${serve.sandboxUrl}/platforms/qhyg/oauth/token`, {
      method: 'POST', headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=none',
    });
    expect((await token(wrong)).status).toBe(401);
    // Past client authentication: only the (made-up) refresh token is refused.
    const right = await token(basic);
    expect(right.status).toBe(400);
    expect(((await right.json()) as { error: string }).error).toBe('invalid_grant');

    const listed = await apps('list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${record.clientId}\tqhyg\t`);
    expect(listed.stdout).toMatch(new RegExp(`${record.clientId}\\tqhyg\\t\\S+Z\\tAcme app\\thttps://acme.example/cb\\n`));
    expect(listed.stdout + listed.stderr).not.toContain(record.clientSecret);
    const listedJson = await json('list');
    expect(JSON.stringify(listedJson)).not.toContain(record.clientSecret);
    expect(listedJson.find((a: { clientId: string }) => a.clientId === record.clientId)).toEqual({
      clientId: record.clientId, platform: 'qhyg', name: 'Acme app', callbackUrls: ['https://acme.example/cb'], created: expect.stringMatching(/Z$/),
    });
  });

  it('--json: create gives the object with its secret; list filters by platform', async () => {
    const quick = await json('create', '--platform', 'QHYG');
    expect(quick).toMatchObject({ platform: 'qhyg', name: 'Sandbox app', callbackUrls: [], clientSecret: expect.any(String) });
    const xero = await json('create', '--platform', 'gbol', '--callback-url', 'http://127.0.0.1:9/a', '--callback-url', 'http://127.0.0.1:9/b');
    expect(xero.callbackUrls).toEqual(['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b']);
    const onlyXero = await json('list', '--platform', 'gbol');
    expect(onlyXero.map((a: { clientId: string }) => a.clientId)).toEqual([xero.clientId]);
    expect((await json('list', '--platform', 'qhyg')).map((a: { clientId: string }) => a.clientId)).toContain(quick.clientId);
    expect(await json('list', '--platform', 'akxx')).toEqual([]);
  });

  it('callbacks add and remove, idempotent add, and the callback URLs on stdout', async () => {
    const app = await json('create', '--platform', 'qhyg');
    const url = `${serve.baseUrl}/callback/qhyg`;
    const added = await apps('callbacks', 'add', app.clientId, url);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe(`${url}\n`);
    expect(added.stderr).toContain(`Added ${url} to app ${app.clientId}.`);
    const again = await json('callbacks', 'add', app.clientId, url);
    expect(again).toEqual({ clientId: app.clientId, platform: 'qhyg', url, changed: false, callbackUrls: [url] });
    expect((await json('callbacks', 'add', app.clientId, 'https://other.example/cb')).callbackUrls).toEqual([url, 'https://other.example/cb']);

    const removed = await json('callbacks', 'remove', app.clientId, url);
    expect(removed).toEqual({ clientId: app.clientId, platform: 'qhyg', url, changed: true, callbackUrls: ['https://other.example/cb'] });
    const lookup = await fetch(`${serve.sandboxUrl}/admin/apps/${app.clientId}?callbackUrl=${encodeURIComponent(url)}`, { headers: { authorization: `Basic ${Buffer.from(serve.adminKey).toString('base64')}` } });
    expect(((await lookup.json()) as { callbackUrlRegistered: boolean }).callbackUrlRegistered).toBe(false);
  });

  it('refuses an unknown platform (exit 2, with the key and how to list them), an unknown app (exit 1) and a bad URL (exit 2)', async () => {
    const before = (await json('list')).length;
    const typo = await apps('create', '--platform', 'qhgy');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('error: --platform qhgy is not a platform key.');
    expect(typo.stderr).toContain('hint: Did you mean qhyg (QuickBooks Online)? Every key: ferry integrations list');
    const listTypo = await apps('list', '--platform', 'nope');
    expect(listTypo.code).toBe(2);
    expect(listTypo.stderr).toContain('--platform nope is not a platform key.');

    const badUrl = await apps('create', '--platform', 'qhyg', '--callback-url', 'ftp://files.example/cb');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('error: --callback-url "ftp://files.example/cb" is not an absolute http(s) URL.');
    expect((await json('list')).length).toBe(before);

    const noApp = await apps('callbacks', 'add', 'NO-SUCH-APP', 'https://acme.example/cb');
    expect(noApp.code).toBe(1);
    expect(noApp.stderr).toContain('error: The sandbox has no app NO-SUCH-APP.');
    expect(noApp.stderr).toContain(`hint: See the apps with: ferry ${remote.join(' ')} sandbox apps list`);

    const app = await json('create', '--platform', 'qhyg', '--callback-url', 'https://acme.example/cb');
    const notUrl = await apps('callbacks', 'add', app.clientId, 'acme.example/cb');
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toContain('error: "acme.example/cb" is not an absolute http(s) URL.');
    const notThere = await apps('callbacks', 'remove', app.clientId, 'https://elsewhere.example/cb');
    expect(notThere.code).toBe(1);
    expect(notThere.stderr).toContain(`error: App ${app.clientId} has no callback URL https://elsewhere.example/cb.`);
    expect(notThere.stderr).toContain('hint: Its callback URLs: https://acme.example/cb');
    const asJson = await ferry([...remote, '--json', 'sandbox', 'apps', 'callbacks', 'remove', app.clientId, 'https://elsewhere.example/cb']);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr.trim().split('\n').pop()!).error).toMatchObject({ exitCode: 1, message: expect.stringContaining('has no callback URL') });
  });

  it('on a terminal: a table with a header, and a hint when there is nothing to list', async () => {
    const table = await ferry([...remote, 'sandbox', 'apps', 'list', '--platform', 'qhyg'], { tty: true, env: { NO_COLOR: '1' } });
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^CLIENTID {2,}PLATFORM {2}CREATED {2,}NAME {2,}CALLBACKURLS$/);
    expect(rows.length).toBeGreaterThan(0);
    const none = await ferry([...remote, 'sandbox', 'apps', 'list', '--platform', 'akxx'], { tty: true, env: { NO_COLOR: '1' } });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain(`No sandbox apps on akxx. Create one: ferry ${remote.join(' ')} sandbox apps create --platform akxx`);
  });

  it('a managed rehearsal: steps 1 and 3 with an app made by these commands, following the hints', async () => {
    const work = serve.dir;
    const client = await ferry([...remote, '--json', 'admin', 'clients', 'create', '--name', 'Rehearsal Ltd', '--plan', 'Paid']);
    expect(client.code, client.stderr).toBe(0);
    const companies = join(work, 'rehearsal.csv');
    expect((await ferry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '1', '--invoices', '2', '--out', companies])).code).toBe(0);
    const app = await json('create', '--platform', 'qhyg', '--name', 'Rehearsal app');
    const plan = join(work, 'rehearsal', 'plan.json');
    const init = await ferry([...remote, 'managed', 'init', '--platform', 'qhyg', '--client', JSON.parse(client.stdout).id, '--companies', companies, '--file', plan]);
    expect(init.code, init.stderr).toBe(0);
    const step = (...args: string[]) => ferry([...remote, 'managed', 'step', ...args, '--confirm', '--file', plan, '--by', 'Sam']);
    const xeroApp = await json('create', '--platform', 'gbol');
    const wrongPlatform = await step('1', '--app-client-id', xeroApp.clientId);
    expect(wrongPlatform.code).toBe(1);
    expect(wrongPlatform.stderr).toContain(`error: Step 1 failed: App ${xeroApp.clientId} belongs to platform gbol, not qhyg.`);
    expect(wrongPlatform.stderr).toContain('hint: See the apps with: ferry sandbox apps list --platform qhyg');
    const one = await step('1', '--app-client-id', app.clientId);
    expect(one.code, one.stderr).toBe(0);
    const two = await step('2', '--date', '2026-12-01', '--contact', 'ops@example.com');
    expect(two.code, two.stderr).toBe(0);

    const url = `${serve.baseUrl}/callback/qhyg`;
    const three = await step('3');
    expect(three.code).toBe(1);
    const hint = /hint: Add it to the sandbox app: (ferry sandbox apps callbacks add \S+ \S+ --base-url \S+ --api-key-file \S+), then run: ferry managed step 3 --confirm/.exec(three.stderr);
    // The plan recorded the key file given at init with its base URL: the command runs as printed.
    expect(hint?.[1]).toBe(`ferry sandbox apps callbacks add ${app.clientId} ${url} ${remote.join(' ')}`);
    expect((await ferry(hint![1]!.split(' ').slice(1))).code).toBe(0);
    const again = await ferry([...remote, '--json', 'managed', 'step', '3', '--confirm', '--file', plan, '--by', 'Sam']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ step: { state: 'done' }, details: { callbackUrl: url, checkedWithPlatform: true } });
  });
});
