// The everyday resource commands in-process (companies, connections, integrations)
// against a real service and sandbox on 127.0.0.1:0: every output mode, exit codes,
// --yes without a terminal, and token authorization from a file and from stdin.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { runCompaniesDelete } from '../../src/cli/commands/companies/delete.js';
import { runConnectionsDelete } from '../../src/cli/commands/connections/delete.js';
import type { CommandContext } from '../../src/cli/context.js';
import { createIO } from '../../src/cli/io.js';
import { ApiClient } from '../../src/client/client.js';
import { INTEGRATIONS } from '../../src/platforms/registry.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { createClient, createTenant, waitFor } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: Harness;
let work: string;
/** A Paid client's key per test group, so each group sees only its own companies. */
const envFor = (apiKey: string) => ({ FERRY_BASE_URL: h.baseUrl, FERRY_API_KEY: apiKey });

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  work = tempDir('ferry-resources-');
});
afterAll(async () => {
  await h.stop();
});

async function newClient(name: string): Promise<Record<string, string>> {
  return envFor(await createClient(h.api, h.adminKey, name, 'Paid'));
}

async function createCompany(env: Record<string, string>, name: string): Promise<string> {
  const result = await ferry(['companies', 'create', '--name', name], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

async function createConnection(env: Record<string, string>, companyId: string, platform = 'gbol'): Promise<string> {
  const result = await ferry(['connections', 'create', '--company', companyId, '--platform', platform], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

/**
 * A run function on a pretend terminal, for prompts: the in-process runner ends stdin
 * before a prompt could read it, so these tests type the answer once the prompt is drawn.
 */
function terminal(apiKey: string) {
  const stream = () => Object.assign(new PassThrough(), { isTTY: true });
  const stdin = stream();
  const stdout = stream();
  const stderr = stream();
  let errText = '';
  stderr.on('data', (d: Buffer) => (errText += d.toString()));
  // The prompt library pipes into its output and ends the pipe when done; Node never ends
  // process.stderr that way, so neither may this stand-in.
  stderr.end = (() => stderr) as never;
  stdout.resume();
  const io = createIO({ stdin, stdout, stderr, env: { NO_COLOR: '1' } });
  const client = new ApiClient({ baseUrl: h.baseUrl, apiKey });
  const ctx: CommandContext = {
    io, flags: {}, signal: new AbortController().signal,
    connect: async () => ({ client, baseUrl: h.baseUrl, embedded: false }),
  };
  return {
    ctx,
    stderr: () => errText,
    async answer(question: string, keys: string) {
      await waitFor(`the prompt "${question}"`, async () => errText.includes(question) && errText.includes('(y/N)'), 10_000, 20);
      stdin.write(keys);
    },
    close: () => client.close(),
  };
}

function writeTokens(name: string, content: string): string {
  const path = join(work, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe('ferry companies create', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    env = await newClient('Create');
  });

  it('prints the id alone on stdout, and the record with --json', async () => {
    const plain = await ferry(['companies', 'create', '--name', 'Acme Ltd', '--tag', 'region=eu'], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(UUID);
    expect(plain.stderr).toContain('Created company Acme Ltd');
    expect(plain.stderr).toContain('ferry connections create --company');

    const json = await ferry(['--json', 'companies', 'create', '--name', 'Beta', '--description', 'Pilot', '--tag', 'region=eu', '--tag', 'formula=a=b'], { env });
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    const record = JSON.parse(json.stdout);
    expect(record).toMatchObject({ name: 'Beta', description: 'Pilot', tags: { region: 'eu', formula: 'a=b' }, dataConnections: [] });
    expect(record.id).toMatch(UUID);
  });

  it('says so when the service drops characters from the name', async () => {
    const result = await ferry(['companies', 'create', '--name', 'Acme <Holdings>'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stored the name as "Acme Holdings"');
  });

  it('refuses a tag that is not key=value, or a key given twice, before any request', async () => {
    for (const [tag, message] of [['region', '"region" is not key=value'], ['=eu', 'is not key=value'], [' =eu', 'has an empty key']] as const) {
      const result = await ferry(['companies', 'create', '--name', 'X', '--tag', tag], { env });
      expect(result.code, tag).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain('--tag key=value');
    }
    const twice = await ferry(['companies', 'create', '--name', 'X', '--tag', 'a=1', '--tag', 'a=2'], { env });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--tag a is given twice');
    const list = JSON.parse((await ferry(['--json', 'companies', 'list', '--query', 'name=X'], { env })).stdout);
    expect(list.totalResults).toBe(0);
  });

  it('shows the service\'s problem with a name that is empty once cleaned, once (exit 1)', async () => {
    const result = await ferry(['companies', 'create', '--name', '<<>>'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HTTP 400');
    // The one validation item says what the message says: not printed twice.
    expect(result.stderr.match(/name is empty once characters/g)).toHaveLength(1);
  });

  it('a missing --name is a usage error', async () => {
    const result = await ferry(['companies', 'create'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--name');
  });
});

describe('ferry companies list', () => {
  let env: Record<string, string>;
  const ids: string[] = [];
  beforeAll(async () => {
    env = await newClient('List');
    for (let i = 1; i <= 7; i++) {
      const created = await h.api.call('POST', '/companies', { apiKey: env.FERRY_API_KEY, body: { name: `List Co ${i}` } });
      ids.push(created.body.id);
    }
    const linked = await h.api.call('POST', `/companies/${ids[0]}/connections`, { apiKey: env.FERRY_API_KEY, body: { platformKey: 'gbol' } });
    expect(linked.status).toBe(200);
  });

  it('piped: tab-separated id, name, connections, created, lastSync; no header', async () => {
    const result = await ferry(['companies', 'list'], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(lines).toHaveLength(7);
    expect(lines[0]).toEqual([ids[0], 'List Co 1', '1', expect.stringMatching(/Z$/), '']);
    expect(lines[1]![2]).toBe('0');
    expect(result.stderr).toContain('Page 1 of 1 (7 companies).');
  });

  it('on a terminal: an aligned table with a header', async () => {
    const result = await ferry(['companies', 'list', '--page-size', '3'], { env, tty: true });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CONNECTIONS\s+CREATED\s+LASTSYNC$/);
    expect(lines).toHaveLength(4);
    expect(result.stderr).toContain('Page 1 of 3 (7 companies). Next: --page 2, or --all for every page.');
  });

  it('one page by default: --page and --page-size; --json is the page envelope', async () => {
    const result = await ferry(['--json', 'companies', 'list', '--page', '2', '--page-size', '3'], { env });
    expect(result.code).toBe(0);
    const page = JSON.parse(result.stdout);
    expect(page).toMatchObject({ pageNumber: 2, pageSize: 3, totalResults: 7 });
    expect(page.results.map((c: { id: string }) => c.id)).toEqual(ids.slice(3, 6));
    expect(page._links.next.href).toContain('page=3');
    expect(result.stderr).toBe('');
  });

  it('--all follows _links.next: every record; --json is an array', async () => {
    const json = await ferry(['--json', 'companies', 'list', '--all', '--page-size', '2'], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).map((c: { id: string }) => c.id)).toEqual(ids);
    const plain = await ferry(['companies', 'list', '--all', '--page-size', '2'], { env });
    expect(plain.stdout.trim().split('\n').map((l) => l.split('\t')[0])).toEqual(ids);
  });

  it('--all on a terminal: one table of every record', async () => {
    // NO_COLOR: the test's fake terminal cannot move a cursor, so progress is a log line, not a spinner.
    const result = await ferry(['companies', 'list', '--all', '--page-size', '3'], { env: { ...env, NO_COLOR: '1' }, tty: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('7 companies');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME/);
    expect(lines).toHaveLength(8);
  });

  it('passes --query and --order-by to the service', async () => {
    const result = await ferry(['--json', 'companies', 'list', '--all', '--query', 'name~Co 1 || name~Co 7', '--order-by', '-name'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).map((c: { name: string }) => c.name)).toEqual(['List Co 7', 'List Co 1']);
    const bad = await ferry(['companies', 'list', '--query', 'nosuch=1'], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Could not resolve property nosuch');
  });

  it('a page past the end says so', async () => {
    const result = await ferry(['companies', 'list', '--page', '9', '--page-size', '5'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Page 9 is past the end: 7 companies make 2 pages of 5.');
  });

  it('bad paging flags are usage errors', async () => {
    for (const args of [['--page', '0'], ['--page-size', 'ten'], ['--page-size', '6000'], ['--all', '--page', '2']]) {
      const result = await ferry(['companies', 'list', ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
    }
    const conflict = await ferry(['companies', 'list', '--all', '--page', '2'], { env });
    expect(conflict.stderr).toContain('--page and --all do not go together');
  });
});

describe('ferry companies get and delete', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    env = await newClient('GetDelete');
  });

  it('get: key/value lines and a line per connection when piped', async () => {
    const id = (await ferry(['companies', 'create', '--name', 'Gamma', '--tag', 'tier=gold', '--tag', 'region=eu'], { env })).stdout.trim();
    const connectionId = await createConnection(env, id);
    const result = await ferry(['companies', 'get', id], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toContain(`id\t${id}`);
    expect(lines).toContain('name\tGamma');
    expect(lines).toContain('tags\ttier=gold;region=eu');
    expect(lines).toContain('connections\t1');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^connection\t${connectionId}\tgbol\tPendingAuth\t`)));
  });

  it('get on a terminal: aligned fields and a connections table; --json: the record', async () => {
    const id = await createCompany(env, 'Delta');
    const connectionId = await createConnection(env, id);
    const tty = await ferry(['companies', 'get', id], { env, tty: true });
    expect(tty.stdout).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(tty.stdout).toMatch(/^lastSync +never$/m);
    expect(tty.stdout).toMatch(/^CONNECTION\s+PLATFORM\s+STATUS/m);
    expect(tty.stdout).toContain(`${connectionId}  gbol (Xero)  PendingAuth`);
    const json = await ferry(['--json', 'companies', 'get', id], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ id, name: 'Delta', dataConnections: [{ id: connectionId, integrationKey: 'gbol' }] });
  });

  it('get of an unknown company exits 1 with the service message', async () => {
    const result = await ferry(['companies', 'get', '00000000-0000-4000-8000-000000000000'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Company 00000000-0000-4000-8000-000000000000 not found.');
    const json = await ferry(['--json', 'companies', 'get', 'nope'], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr).error).toMatchObject({ status: 404, exitCode: 1 });
  });

  it('delete without a terminal needs --yes (exit 2, nothing deleted); with --yes it deletes', async () => {
    const id = await createCompany(env, 'Epsilon');
    const refused = await ferry(['companies', 'delete', id], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Refusing without --yes');
    expect(refused.stderr).toContain('Add --yes');
    const noInput = await ferry(['--no-input', 'companies', 'delete', id], { env, tty: true });
    expect(noInput.code).toBe(2);
    const json = await ferry(['--json', 'companies', 'delete', id], { env });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr).error.message).toContain('--yes');
    expect((await ferry(['companies', 'get', id], { env })).code).toBe(0);

    const deleted = await ferry(['--json', 'companies', 'delete', id, '--yes'], { env });
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ id, deleted: true });
    expect((await ferry(['companies', 'get', id], { env })).code).toBe(1);
    const again = await ferry(['companies', 'delete', id, '--yes'], { env });
    expect(again.code).toBe(1);
  });

  it('delete on a terminal asks, naming the company; "n" keeps it, "y" deletes it', async () => {
    const id = await createCompany(env, 'Zeta');
    await createConnection(env, id);
    const no = terminal(env.FERRY_API_KEY!);
    const kept = runCompaniesDelete({}, no.ctx, [id]);
    await no.answer('Delete company Zeta', 'n\r');
    await expect(kept).rejects.toThrow('Cancelled.');
    // (the prompt wraps at the pretend terminal's 80 columns)
    expect(no.stderr()).toContain('with its 1 connecti');
    expect((await ferry(['companies', 'get', id], { env })).code).toBe(0);

    const yes = terminal(env.FERRY_API_KEY!);
    const gone = runCompaniesDelete({}, yes.ctx, [id]);
    await yes.answer('Delete company Zeta', 'y\r');
    await gone;
    await waitFor('the deleted line', async () => yes.stderr().includes(`Deleted company Zeta (${id}).`), 5_000, 10);
    expect((await ferry(['companies', 'get', id], { env })).code).toBe(1);
    await Promise.all([no.close(), yes.close()]);
  });

  it("another client's company is 403 → exit 4", async () => {
    const id = await createCompany(env, 'Private');
    const other = await newClient('Other');
    const result = await ferry(['companies', 'get', id], { env: other });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('HTTP 403');
  });
});

describe('ferry connections', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    env = await newClient('Connections');
  });

  it('create prints the id (or the record with --json); an unknown platform shows the service item', async () => {
    const companyId = await createCompany(env, 'Conn Co');
    const plain = await ferry(['connections', 'create', '--company', companyId, '--platform', 'gbol'], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(UUID);
    expect(plain.stderr).toContain('to Xero (PendingAuth)');
    expect(plain.stderr).toContain('ferry connections authorize');
    const json = await ferry(['--json', 'connections', 'create', '--company', companyId, '--platform', 'akxx'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ integrationKey: 'akxx', platformName: 'Oracle NetSuite', status: 'PendingAuth' });
    const unknown = await ferry(['connections', 'create', '--company', companyId, '--platform', 'zzzz'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('platformKey: No integration has the key zzzz');
    const noCompany = await ferry(['connections', 'create', '--company', 'nope', '--platform', 'gbol'], { env });
    expect(noCompany.code).toBe(1);
    expect(noCompany.stderr).toContain('Company nope not found.');
  });

  it('list in the three modes', async () => {
    const companyId = await createCompany(env, 'List Conn Co');
    const a = await createConnection(env, companyId, 'gbol');
    const b = await createConnection(env, companyId, 'exgd');
    const plain = await ferry(['connections', 'list', '--company', companyId], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 4))).toEqual([
      [a, 'gbol', 'Xero', 'PendingAuth'],
      [b, 'exgd', 'Stripe', 'PendingAuth'],
    ]);
    const tty = await ferry(['connections', 'list', '--company', companyId], { env, tty: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^ID\s+PLATFORM\s+NAME\s+STATUS\s+CREATED\s+LASTSYNC$/);
    const json = await ferry(['--json', 'connections', 'list', '--company', companyId], { env });
    expect(JSON.parse(json.stdout).map((c: { id: string }) => c.id)).toEqual([a, b]);
    const missing = await ferry(['connections', 'list'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--company');
  });

  it('get takes the connection id as the argument or as --connection', async () => {
    const companyId = await createCompany(env, 'Get Conn Co');
    const id = await createConnection(env, companyId);
    const positional = await ferry(['connections', 'get', '--company', companyId, id], { env });
    const flag = await ferry(['connections', 'get', '--company', companyId, '--connection', id], { env });
    expect(positional.code).toBe(0);
    expect(positional.stdout).toBe(flag.stdout);
    expect(positional.stdout).toContain(`id\t${id}\n`);
    expect(positional.stdout).toContain('status\tPendingAuth\n');
    expect(positional.stdout).toContain('platformName\tXero\n');
    const tty = await ferry(['connections', 'get', '--company', companyId, id], { env, tty: true });
    expect(tty.stdout).toMatch(/^status +PendingAuth$/m);
    expect(tty.stderr).toContain('Not authorized yet: ferry connections authorize');
    const json = await ferry(['--json', 'connections', 'get', '--company', companyId, id], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ id, status: 'PendingAuth' });
    expect(JSON.parse(json.stdout)).not.toHaveProperty('dataConnectionErrors');

    const neither = await ferry(['connections', 'get', '--company', companyId], { env });
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Missing the connection id');
    // The command that lists them names the company given.
    expect(neither.stderr).toContain(`list them with: ferry connections list --company ${companyId}`);
    const both = await ferry(['connections', 'get', '--company', companyId, id, '--connection', 'other'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Two different connection ids');
    const unknown = await ferry(['connections', 'get', '--company', companyId, 'nope'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Data connection nope not found');
  });

  it('authorize from a file: Linked, the sync reminder, and no token in any output', async () => {
    const companyId = await createCompany(env, 'Auth File Co');
    const id = await createConnection(env, companyId);
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 5, 101);
    const file = writeTokens('xero.json', JSON.stringify(tenant.tokens));
    const result = await ferry(['connections', 'authorize', '--company', companyId, '--connection', id, '--tokens-file', file], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Authorized connection ${id} (Xero): Linked.`);
    expect(result.stderr).toContain(`No data is fetched until a sync runs: ferry sync ${companyId}`);
    expect(result.stderr).not.toContain('readable by other users');
    // The secrets; tenantId is the organisation's id, which the connection record may show.
    for (const token of [tenant.tokens.accessToken!, tenant.tokens.refreshToken!]) expect(result.stdout + result.stderr).not.toContain(token);
    expect((await ferry(['connections', 'get', '--company', companyId, id], { env })).stdout).toContain('status\tLinked\n');

    // unlink then works; a second unlink is the service's 400 (exit 1)
    const unlinked = await ferry(['--json', 'connections', 'unlink', '--company', companyId, id], { env });
    expect(unlinked.code).toBe(0);
    expect(JSON.parse(unlinked.stdout)).toMatchObject({ id, status: 'Unlinked' });
    const again = await ferry(['connections', 'unlink', '--company', companyId, '--connection', id], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Only a Linked connection can be unlinked');
  });

  it('authorize from stdin with --json prints the Linked connection and nothing on stderr', async () => {
    const companyId = await createCompany(env, 'Auth Stdin Co');
    const id = await createConnection(env, companyId);
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 5, 102);
    const result = await ferry(['--json', 'connections', 'authorize', '--company', companyId, id, '--tokens-file', '-'], { env, stdin: JSON.stringify(tenant.tokens) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const record = JSON.parse(result.stdout);
    expect(record).toMatchObject({ id, status: 'Linked' });
    for (const token of [tenant.tokens.accessToken!, tenant.tokens.refreshToken!]) expect(result.stdout).not.toContain(token);
  });

  it('a managed-only platform refused to a client key: 403 with the way to the managed migration', async () => {
    const companyId = await createCompany(env, 'Auth Managed Co');
    const id = await createConnection(env, companyId, 'qhyg');
    const file = writeTokens('qbo.json', JSON.stringify({ accessToken: 'at_managed_x', refreshToken: 'rt_managed_x', realmId: '123' }));
    const result = await ferry(['connections', 'authorize', '--company', companyId, id, '--tokens-file', file], { env });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('hint: This platform is migrated by the support team: ferry managed init (admin key).');
    expect(result.stderr).not.toContain('at_managed_x');
  });

  it('warns when the token file is readable by others', async () => {
    const companyId = await createCompany(env, 'Auth Mode Co');
    const id = await createConnection(env, companyId);
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 5, 103);
    const file = writeTokens('open.json', JSON.stringify(tenant.tokens));
    chmodSync(file, 0o644);
    const result = await ferry(['connections', 'authorize', '--company', companyId, id, '--tokens-file', file], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('readable by other users; chmod 600 it');
  });

  describe('bad token files', () => {
    let companyId: string;
    let id: string;
    const authorize = (file: string, extra: string[] = [], stdin?: string) =>
      ferry([...extra, 'connections', 'authorize', '--company', companyId, '--connection', id, '--tokens-file', file], { env, ...(stdin !== undefined ? { stdin } : {}) });
    beforeAll(async () => {
      companyId = await createCompany(env, 'Bad Tokens Co');
      id = await createConnection(env, companyId);
    });

    it('not JSON: usage error that never quotes the content', async () => {
      const result = await authorize(writeTokens('broken.json', '{"accessToken": "at_secret_9f8e7d", "refreshToken": '));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('is not valid JSON');
      expect(result.stderr).not.toContain('at_secret_9f8e7d');
      const viaStdin = await authorize('-', [], 'at_secret_9f8e7d');
      expect(viaStdin.code).toBe(2);
      expect(viaStdin.stderr).toContain('--tokens-file stdin is not valid JSON');
      expect(viaStdin.stderr).not.toContain('at_secret_9f8e7d');
    });

    it('a CSV file points to ferry migrate tokens', async () => {
      const result = await authorize(writeTokens('tokens.csv', 'accessToken,refreshToken,tenantId\nat_secret_1,rt_secret_2,t\n'));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('It looks like CSV');
      expect(result.stderr).toContain('ferry migrate tokens');
      expect(result.stderr).not.toContain('at_secret_1');
    });

    it('an array, a string, an empty or a missing file: usage errors', async () => {
      const array = await authorize(writeTokens('array.json', '[{"accessToken":"at_secret_3"}]'));
      expect(array.code).toBe(2);
      expect(array.stderr).toContain('holds a JSON array, not an object');
      expect(array.stderr).not.toContain('at_secret_3');
      const string = await authorize(writeTokens('string.json', '"at_secret_4"'));
      expect(string.code).toBe(2);
      expect(string.stderr).toContain('holds a JSON string, not an object');
      const empty = await authorize(writeTokens('empty.json', ' \n'));
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('is empty');
      const missing = await authorize(join(work, 'no-such.json'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('Cannot read --tokens-file');
      expect(missing.stderr).toContain('ENOENT');
    });

    it('a missing or unknown field: the service names each key (exit 1) and the hint names the integration', async () => {
      const file = writeTokens('partial.json', JSON.stringify({ accessToken: 'at_secret_5', tenantID: 'x' }));
      const result = await authorize(file);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('The tokens do not match the Xero token schema.');
      expect(result.stderr).toContain('  - refreshToken: refreshToken is required for Xero');
      expect(result.stderr).toContain('  - tenantId: tenantId is required for Xero');
      expect(result.stderr).toContain('  - tenantID: tenantID is not a token field of Xero');
      expect(result.stderr).toContain('hint: The connection is unchanged. Token fields for this platform: ferry integrations get gbol (or ferry templates show gbol).');
      expect(result.stderr).not.toContain('at_secret_5');

      const json = await authorize(file, ['--json']);
      expect(json.code).toBe(1);
      expect(json.stdout).toBe('');
      const error = JSON.parse(json.stderr).error;
      expect(error).toMatchObject({ status: 400, exitCode: 1, hint: expect.stringContaining('ferry integrations get gbol') });
      expect(error.validation.map((v: { itemId: string }) => v.itemId).sort()).toEqual(['refreshToken', 'tenantID', 'tenantId']);
      expect(json.stderr).not.toContain('at_secret_5');
    });

    it('a value that is not a string is named by the service', async () => {
      const result = await authorize(writeTokens('number.json', JSON.stringify({ accessToken: 'a', refreshToken: 'b', tenantId: 42 })));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('tenantId must be a string');
    });

    it('tokens the platform refuses: exit 1, the connection stays PendingAuth, the values are not shown', async () => {
      const result = await authorize(writeTokens('wrong.json', JSON.stringify({ accessToken: 'at_secret_6', refreshToken: 'rt_secret_7', tenantId: '00000000-0000-4000-8000-000000000001' })));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Xero rejected the tokens.');
      expect(result.stderr).toContain('hint: The platform refused these tokens');
      expect(result.stderr).not.toMatch(/at_secret_6|rt_secret_7/);
      expect((await ferry(['connections', 'get', '--company', companyId, id], { env })).stdout).toContain('status\tPendingAuth\n');
    });
  });

  it('a managed integration is refused to a client key: 403 → exit 4 with a managed-migration hint', async () => {
    const companyId = await createCompany(env, 'Managed Co');
    const id = await createConnection(env, companyId, 'qhyg');
    const tenant = await createTenant(h.sandboxUrl, 'qhyg', 5, 104);
    const result = await ferry(['connections', 'authorize', '--company', companyId, id, '--tokens-file', writeTokens('qbo.json', JSON.stringify(tenant.tokens))], { env });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('managed migration');
    expect(result.stderr).toContain('hint: This platform is migrated by the support team: ferry managed init');
  });

  it('delete needs --yes without a terminal, then removes the connection', async () => {
    const companyId = await createCompany(env, 'Delete Conn Co');
    const id = await createConnection(env, companyId);
    const refused = await ferry(['connections', 'delete', '--company', companyId, id], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`Delete connection ${id}? Refusing without --yes.`);
    expect((await ferry(['connections', 'get', '--company', companyId, id], { env })).code).toBe(0);
    const asked = terminal(env.FERRY_API_KEY!);
    const kept = runConnectionsDelete({ company: companyId }, asked.ctx, [id]);
    await asked.answer(`Delete connection ${id} (Xero, PendingAuth)`, 'n\r');
    await expect(kept).rejects.toThrow('Cancelled.');
    await asked.close();
    const deleted = await ferry(['--json', 'connections', 'delete', '--company', companyId, '--connection', id, '--yes'], { env });
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ id, companyId, deleted: true });
    expect((await ferry(['connections', 'get', '--company', companyId, id], { env })).code).toBe(1);
  });
});

describe('ferry integrations', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    env = await newClient('Integrations');
  });

  it('list: every integration in three modes; --route filters', async () => {
    const plain = await ferry(['integrations', 'list'], { env });
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(lines).toHaveLength(INTEGRATIONS.length);
    expect(lines).toContainEqual(['gbol', 'Xero', 'Accounting', 'self-service', String(INTEGRATIONS.find((i) => i.key === 'gbol')!.dataTypes.length)]);
    const tty = await ferry(['integrations', 'list'], { env, tty: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^KEY\s+NAME\s+SOURCETYPE\s+ROUTE\s+DATATYPES$/);
    const managed = JSON.parse((await ferry(['--json', 'integrations', 'list', '--route', 'managed'], { env })).stdout);
    expect(managed.map((i: { key: string }) => i.key).sort()).toEqual(INTEGRATIONS.filter((i) => i.migrationRoute === 'managed').map((i) => i.key).sort());
    expect(managed[0]).toHaveProperty('tokenFields');
    const bad = await ferry(['integrations', 'list', '--route', 'both'], { env });
    expect(bad.code).toBe(2);
  });

  it('get: token fields with required/description and data types', async () => {
    const gbol = INTEGRATIONS.find((i) => i.key === 'gbol')!;
    const plain = await ferry(['integrations', 'get', 'gbol'], { env });
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trim().split('\n');
    expect(lines.slice(0, 4)).toEqual(['key\tgbol', 'name\tXero', 'sourceType\tAccounting', 'route\tself-service']);
    expect(lines).toContain(`tokenField\taccessToken\trequired\t${gbol.tokenFields[0]!.description}`);
    expect(lines).toContainEqual(expect.stringMatching(/^tokenField\texpiresAt\toptional\t/));
    expect(lines.filter((l) => l.startsWith('dataType\t'))).toEqual(gbol.dataTypes.map((t) => `dataType\t${t}`));
    const tty = await ferry(['integrations', 'get', 'GBOL'], { env, tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/^NAME\s+REQUIRED\s+DESCRIPTION$/m);
    expect(tty.stdout).toMatch(/^expiresAt\s+no\s+/m);
    expect(tty.stdout).toContain(`Data types (${gbol.dataTypes.length}): invoices`);
    const json = JSON.parse((await ferry(['--json', 'integrations', 'get', 'gbol'], { env })).stdout);
    expect(json).toEqual({
      key: 'gbol', logoUrl: expect.stringMatching(/\/branding\/gbol\/logo-full\.svg$/), name: 'Xero', enabled: true, sourceId: expect.any(String),
      sourceType: 'Accounting', integrationId: expect.any(String), isOfflineConnector: false, isBeta: false, dataProvidedBy: 'Xero', migrationRoute: 'self-service',
      tokenFields: gbol.tokenFields.map(({ name, required, description }) => ({ name, required, description })), dataTypes: gbol.dataTypes,
    });
  });

  it('get of an unknown key: exit 1 with close matches', async () => {
    const result = await ferry(['integrations', 'get', 'xero'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Integration xero not found.');
    expect(result.stderr).toContain('hint: Did you mean gbol (Xero)?');
    const json = await ferry(['--json', 'integrations', 'get', 'gbl'], { env });
    expect(JSON.parse(json.stderr).error).toMatchObject({ status: 404, exitCode: 1, hint: expect.stringContaining('gbol (Xero)') });
  });
});

describe('credentials', () => {
  it('an unknown key is 401 → exit 4 with a hint', async () => {
    const result = await ferry(['companies', 'list'], { env: envFor('fy_not_a_real_key') });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('HTTP 401');
    expect(result.stderr).toContain('hint: check the API key');
    expect(result.stderr).not.toContain('fy_not_a_real_key');
  });
});
