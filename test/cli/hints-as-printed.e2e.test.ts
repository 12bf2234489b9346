// The commands ferry's hints and "Next:" lines name, pasted into a shell as printed, with the
// real binary against a `ferry serve`: each carries the target flags that reached that
// service, so it acts on the same data. The shell's default target is an empty embedded
// data dir of its own, where a command without those flags finds nothing. A placeholder
// the line names (KEY, FILE) is filled in as its note says; nothing else is changed.
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedAfter, runFerry, runPrinted } from '../helpers/cli.js';
import { startPublicApiProxy } from '../helpers/public-api-proxy.js';
import { tempDir } from '../helpers/service.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { byRow, makeTenants, readResults, stopCleanly, tokensCsv, writeCsv } from '../migrate/support.js';

let stack: ServeHandle;
let receiver: Server;
let receiverUrl: string;
/** Where the pasted commands run: a shell whose own default target is an empty data dir. */
let shellEnv: Record<string, string>;

beforeAll(async () => {
  // The test's receiver is on 127.0.0.1: the service may deliver there only when told so.
  stack = await startTestStack('serve', { args: ['--webhook-allow-private'] });
  receiver = createServer((_req, res) => res.writeHead(200).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  shellEnv = { XDG_DATA_HOME: tempDir('ferry-hints-elsewhere-') };
});

afterAll(async () => {
  receiver?.close();
  await stopCleanly(stack);
});

const ferry = (...args: string[]) => runFerry([...stack.target(), ...args]);
/** In the test's own directory: a command may write a file where it runs (managed init's ./ferry-plan.json). */
const pasted = (line: string) => runPrinted(line, { cwd: stack.dir, env: shellEnv, timeoutMs: 90_000 });

describe('hints run as printed, against the service that printed them', () => {
  it('a new company: companies create\'s Next and status\'s "no connections" create its connection', async () => {
    const created = await ferry('companies', 'create', '--name', 'Hinted Ltd');
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    const next = printedAfter(created.stderr, 'Next:');
    expect(next).toContain('--platform KEY   # keys: ferry integrations list');
    const status = await ferry('status', id);
    expect(status.code, status.stderr).toBe(0);
    const fromStatus = printedAfter(status.stderr, 'create one with');
    expect(fromStatus).toBe(next);
    const connected = await pasted(fromStatus.replace('KEY', 'gbol'));
    expect(connected.code, connected.stderr).toBe(0);
    expect((await ferry('--json', 'status', id)).stdout).toContain(connected.stdout.trim());
  });

  it('export --company of a data set not synced: the sync it names, then the export works', async () => {
    const tenants = await makeTenants(stack.sandboxUrl, 1, { seed: 74_000, invoices: 3 });
    const input = writeCsv(stack.dir, 'one.csv', tokensCsv(tenants));
    expect((await ferry('migrate', 'tokens', input, '--no-sync', '--yes')).code).toBe(0);
    const companyId = [...byRow(readResults(`${input}.results.csv`)).values()][0]!.companyId;
    const first = await ferry('export', 'invoices', '--company', companyId);
    expect(first.code).toBe(1);
    const sync = printedAfter(first.stderr, 'hint: Sync it first:');
    expect(sync).toBe(`ferry ${stack.target().join(' ')} sync ${companyId} --data-type invoices --wait`);
    const synced = await pasted(sync);
    expect(synced.code, synced.stderr).toBe(0);
    const again = await ferry('export', 'invoices', '--company', companyId);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split('\n')).toHaveLength(3);
  }, 120_000);

  it('push to a connection not yet authorized: the authorize it names, with the tenant\'s tokens, then the push', async () => {
    const [tenant] = await makeTenants(stack.sandboxUrl, 1, { seed: 75_000, invoices: 1 });
    const companyId = (await ferry('companies', 'create', '--name', 'Pending Push Ltd')).stdout.trim();
    const connectionId = (await ferry('connections', 'create', '--company', companyId, '--platform', 'gbol')).stdout.trim();
    const record = join(stack.dir, 'customer.json');
    writeFileSync(record, '{"customerName": "Pushed Ltd"}');
    const push = ['push', 'customers', '--company', companyId, '--connection', connectionId, '--file', record];
    const refused = await ferry(...push);
    expect(refused.code).toBe(1);
    const authorize = printedAfter(refused.stderr, 'hint: Authorize it:');
    expect(authorize).toContain('--tokens-file FILE   # its token fields: ferry integrations get gbol');
    const tokens = join(stack.dir, 'tenant-tokens.json');
    writeFileSync(tokens, JSON.stringify(tenant!.tokens), { mode: 0o600 });
    const authorized = await pasted(authorize.replace('FILE', tokens));
    expect(authorized.code, authorized.stderr).toBe(0);
    const pushed = await ferry(...push);
    expect(pushed.code, pushed.stderr).toBe(0);
  }, 120_000);

  it('webhooks: an empty delivery log names the test that sends one, and the test names the log that follows it', async () => {
    const consumerId = (await ferry('webhooks', 'create', '--url', receiverUrl, '--events', 'read.completed')).stdout.trim();
    const empty = await ferry('webhooks', 'deliveries', consumerId);
    expect(empty.code, empty.stderr).toBe(0);
    const test = /\((ferry .+) sends one\)/.exec(empty.stderr)?.[1];
    expect(test).toBe(`ferry ${stack.target().join(' ')} webhooks test ${consumerId}`);
    const sent = await pasted(test!);
    expect(sent.code, sent.stderr).toBe(0);
    const follow = /Follow it: (ferry .+), or test again with --wait\./.exec(sent.stderr)?.[1];
    expect(follow).toBeDefined();
    const log = await pasted(follow!);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain(sent.stdout.trim());
  }, 60_000);

  it('sandbox apps: a callback for an app that does not exist names the list of apps', async () => {
    const missing = await ferry('sandbox', 'apps', 'callbacks', 'add', 'NO-SUCH-APP', 'https://acme.example/cb');
    expect(missing.code).toBe(1);
    const list = printedAfter(missing.stderr, 'hint: See the apps with:');
    const listed = await pasted(list);
    expect(listed.code, listed.stderr).toBe(0);
    const app = (await ferry('--json', 'sandbox', 'apps', 'create', '--platform', 'qhyg')).stdout;
    expect((await pasted(list)).stdout).toContain(JSON.parse(app).clientId);
  });

  it('sandbox tenants of a managed platform: the Next is managed init with their file, not migrate tokens (which refuses them)', async () => {
    const out = join(stack.dir, 'qbo.csv');
    const made = await ferry('sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '2', '--invoices', '1', '--out', out);
    expect(made.code, made.stderr).toBe(0);
    const next = printedAfter(made.stderr, 'Next:');
    expect(next).toBe(`ferry ${stack.target().join(' ')} managed init --platform qhyg --client CLIENT_ID --companies ${out}`);
    const clients = printedAfter(made.stderr, 'with CLIENT_ID the id of the account whose companies move (').replace(/ lists them\)\.$/, '');
    const listed = await pasted(clients);
    expect(listed.code, listed.stderr).toBe(0);
    const client = JSON.parse((await ferry('--json', 'admin', 'clients', 'create', '--name', 'Managed Ltd', '--plan', 'Paid')).stdout) as { id: string };
    const init = await pasted(next.replace('CLIENT_ID', client.id));
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout.trim()).toBe(join(stack.dir, 'ferry-plan.json'));

    // The plan recorded the base URL and the key file it was made with: the step status prints runs from a shell without either.
    const status = await pasted('ferry managed status');
    expect(status.code, status.stderr).toBe(0);
    const step = /^next\t1\t(.+)$/m.exec(status.stdout)?.[1];
    // Paths as typed where status ran: the key file below it, relative.
    expect(step).toBe(`ferry managed step 1 --confirm --app-client-id ID --base-url ${stack.baseUrl} --api-key-file ${relative(stack.dir, stack.adminKeyFile)}`);
    const app = JSON.parse((await ferry('--json', 'sandbox', 'apps', 'create', '--platform', 'qhyg')).stdout) as { clientId: string };
    const one = await runPrinted(step!.replace(' ID ', ` ${app.clientId} `), { cwd: stack.dir, env: { ...shellEnv, FERRY_USER: 'Sam Support' }, timeoutMs: 90_000 });
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).toContain('Step 1 done.');
  }, 120_000);

  it('an admin command where the target has no admin routes: the doctor it names looks at that target', async () => {
    const proxy = await startPublicApiProxy(stack.baseUrl);
    try {
      const target = stack.target(stack.adminKeyFile, proxy.url);
      const refused = await runFerry([...target, 'admin', 'clients', 'list']);
      expect(refused.code).toBe(1);
      const doctor = /this target has no \/admin routes \((ferry .+) says what it is\)/.exec(refused.stderr)?.[1];
      expect(doctor).toBe(`ferry ${target.join(' ')} doctor`);
      const looked = await pasted(doctor!);
      expect(looked.code, looked.stderr).toBe(0);
      expect(looked.stdout).toContain('the public API alone');
    } finally {
      await proxy.close();
    }
  });

  it('a base URL without a key: the login it names is for that URL', async () => {
    const run = await runFerry(['--base-url', stack.baseUrl, 'companies', 'list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`save one with: ferry login --base-url ${stack.baseUrl}`);
  });
});
