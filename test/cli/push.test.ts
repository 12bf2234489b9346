// `ferry push`: one record (.json object) or many (.json array, .ndjson streamed), one
// result line per record with its line number, validation items of a 400, exit codes for
// all/some/none pushed, and --wait on an async platform (the real push worker).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayElementLines } from '../../src/ops/push/records.js';
import type { Stack } from '../../src/stack.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import {
  linkedCompany, patchSandbox, waitFor, type Api, type Linked,
  sampleInvoice } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';
import { newClient, startClientStack, stopClientStack } from './client-stack-support.js';

const PLATFORM = 'gbol';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** A customer id the platform knows, read with the tenant's own token. */
async function platformCustomer(sandboxUrl: string, linked: Linked): Promise<string> {
  const response = await fetch(`${sandboxUrl}/platforms/${PLATFORM}/tenants/${linked.tenant.orgId}/customers?pageSize=1`, {
    headers: { authorization: `Bearer ${linked.tenant.tokens.accessToken}` },
  });
  return ((await response.json()) as { results: Array<{ id: string }> }).results[0]!.id;
}

function invoice(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return sampleInvoice(customerId, { invoiceNumber: 'CLI-1', ...overrides });
}

const ndjson = (lines: Array<Record<string, unknown> | string>) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

describe('arrayElementLines', () => {
  it.each([
    { text: '[{"a":1},{"b":"x,]}"}]', lines: [1, 1] },
    { text: '[\n  {\n    "a": "[{\\"q\\", ]"\n  },\n  {"b": [1, {"c": 2}]},\n\n  3\n]', lines: [2, 5, 7] },
    { text: '[]', lines: [] },
    { text: '\n\n[ "x" ,\n"y"]', lines: [3, 4] },
  ])('$text → $lines', ({ text, lines }) => {
    expect(arrayElementLines(text)).toEqual(lines);
  });
});

describe('ferry push (harness, sync platform)', () => {
  let h: Harness;
  let api: Api;
  let linked: Linked;
  let customerId: string;
  let work: string;
  let remote: string[];
  let target: string[];

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    work = tempDir('ferry-push-cli-');
    ({ api, remote } = await newClient(h.api, h.adminKey, h.baseUrl, 'Push CLI Ltd', work));
    linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, 10, { name: 'Push Target', seed: 51 });
    customerId = await platformCustomer(h.sandboxUrl, linked);
    target = ['--company', linked.companyId, '--connection', linked.connectionId];
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const pushCount = async () => (await api.call('GET', `/companies/${linked.companyId}/push`)).body.totalResults as number;

  it('pushes one record from a .json object: one TSV result line, exit 0', async () => {
    const file = join(work, 'customer.json');
    writeFileSync(file, JSON.stringify({ customerName: 'Ferry Customer Ltd' }, null, 2));
    const result = await ferry([...remote, 'push', 'customers', ...target, '--file', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^1\\t${UUID}\\tSuccess\\t\\n$`));
    expect(result.stderr).toContain('1 record: 1 Success.');
  });

  it('.ndjson with bad records: a line per record with its line number, validation items, exit 3', async () => {
    const before = await pushCount();
    const file = join(work, 'invoices.ndjson');
    writeFileSync(file, ndjson([
      invoice(customerId, { invoiceNumber: 'ND-1' }),
      '',
      invoice(customerId, { customerRef: undefined, issueDate: undefined }),
      invoice('no-such-customer'),
      '{"invoiceNumber": ',
      '[1, 2]',
      invoice(customerId, { invoiceNumber: 'ND-6' }),
    ]));
    const result = await ferry([...remote, 'push', 'invoices', ...target, '--file', file]);
    expect(result.code, result.stderr).toBe(3);
    const lines = result.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(lines.map((l) => [l[0], l[2]])).toEqual([['1', 'Success'], ['3', 'Rejected'], ['4', 'Failed'], ['5', 'Invalid'], ['6', 'Invalid'], ['7', 'Success']]);
    expect(lines[0]![1]).toMatch(new RegExp(`^${UUID}$`));
    expect(lines[1]![1]).toBe('');
    expect(lines[1]![3]).toBe('The invoices record is not valid.; customerRef.id: customerRef.id is required.; issueDate: issueDate is required (ISO 8601 date).');
    expect(lines[2]![1]).toMatch(new RegExp(`^${UUID}$`));
    expect(lines[2]![3]).toContain('customerRef.id');
    expect(lines[3]![3]).toMatch(/^not valid JSON/);
    expect(lines[4]![3]).toBe('not a JSON object (an array)');
    expect(result.stderr).toContain('6 records: 2 Success, 1 Rejected, 1 Failed, 2 Invalid.');
    expect(result.stderr).toContain('error: 4 of 6 records were not pushed successfully.');
    // Only the records that reached the service became push operations (lines 1, 4, 7).
    expect(await pushCount()).toBe(before + 3);
  });

  it('.json array with --json: one document, each result with its element\'s line', async () => {
    const records = [{ customerName: 'Array One' }, { customerName: '' }, { customerName: 'Array Three' }];
    const text = JSON.stringify(records, null, 2);
    const starts = text.split('\n').flatMap((line, i) => (line === '  {' ? [i + 1] : []));
    expect(starts).toHaveLength(3);
    const file = join(work, 'customers.json');
    writeFileSync(file, text);
    const result = await ferry([...remote, '--json', 'push', 'customers', ...target, '--file', file]);
    expect(result.code).toBe(3);
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ dataType: 'customers', companyId: linked.companyId, connectionId: linked.connectionId, file, summary: { total: 3, Success: 2, Rejected: 1 } });
    expect(doc.results.map((r: any) => r.line)).toEqual(starts);
    expect(doc.results[0]).toEqual({ line: starts[0], status: 'Success', pushOperationKey: expect.stringMatching(new RegExp(UUID)), statusCode: 200 });
    expect(doc.results[1]).toMatchObject({
      line: starts[1], status: 'Rejected', statusCode: 400, error: 'The customers record is not valid.',
      validation: [{ itemId: 'customerName', message: 'customerName is required and must be a non-empty string.', validatorName: 'PushValidation' }],
      correlationId: expect.stringMatching(new RegExp(UUID)),
    });
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { exitCode: 3 } });
  });

  it('on a terminal: aligned lines, validation items indented under their record', async () => {
    const file = join(work, 'tty.ndjson');
    writeFileSync(file, ndjson([{ customerName: 'TTY One' }, {}]));
    const result = await ferry([...remote, '--no-color', 'push', 'customers', ...target, '--file', file], { tty: true });
    expect(result.code).toBe(3);
    const [first, second, item] = result.stdout.trimEnd().split('\n');
    expect(first).toMatch(new RegExp(`^line 1      ${UUID}  Success$`));
    expect(second).toMatch(/^line 2 {6}-\s+Rejected {2}The customers record is not valid\.$/);
    expect(item).toBe('            - customerName: customerName is required and must be a non-empty string.');
  });

  it('Ctrl-C while waiting: exit 130, and the Pending push operation is not cancelled', async () => {
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 5 });
    const before = await pushCount();
    const file = join(work, 'pending.json');
    writeFileSync(file, JSON.stringify(invoice(customerId, { invoiceNumber: 'CTRL-C' })));
    const controller = new AbortController();
    // No worker pass runs here, so the push stays Pending.
    const run = ferry([...remote, 'push', 'invoices', ...target, '--file', file, '--wait', '--poll-ms', '50'], { signal: controller.signal });
    await waitFor('the push operation', async () => (await pushCount()) === before + 1);
    setTimeout(() => controller.abort(), 100);
    const result = await run;
    expect(result.code).toBe(130);
    expect(result.stdout).toMatch(new RegExp(`^1\\t${UUID}\\tPending\\t\\n$`));
    expect(result.stderr).toContain('Stopped waiting (interrupted): 1 push operation still Pending. They were not cancelled');
    const key = result.stdout.split('\t')[1];
    expect((await api.call('GET', `/companies/${linked.companyId}/push/${key}`)).body.status).toBe('Pending');
    await patchSandbox(h.sandboxUrl, { pushMode: 'sync' });
  });

  it('when every record fails: exit 1', async () => {
    const file = join(work, 'bad.ndjson');
    writeFileSync(file, ndjson([{}, { customerName: 7 }]));
    const result = await ferry([...remote, 'push', 'customers', ...target, '--file', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('None of the 2 records was pushed successfully.');
  });

  it.each([
    { case: 'an unknown data type', args: ['widgets'], file: 'x.json', content: '{}', says: 'Unknown data type widgets' },
    { case: 'a type that cannot be pushed', args: ['taxRates'], file: 'x.json', content: '{}', says: 'taxRates records cannot be pushed' },
    { case: 'another extension', args: ['customers'], file: 'x.csv', content: 'a,b', says: 'must end in .json or .ndjson' },
    { case: 'invalid JSON', args: ['customers'], file: 'broken.json', content: '[{"customerName": "A"},', says: 'is not valid JSON' },
    { case: 'a JSON scalar', args: ['customers'], file: 'scalar.json', content: '"hello"', says: 'must hold a JSON object or an array of objects' },
    { case: 'an empty .ndjson', args: ['customers'], file: 'empty.ndjson', content: '\n\n', says: 'holds no records' },
  ])('$case is a usage error (exit 2) and pushes nothing', async ({ args, file, content, says }) => {
    const before = await pushCount();
    writeFileSync(join(work, file), content);
    const result = await ferry([...remote, 'push', ...args, ...target, '--file', join(work, file)]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(says);
    expect(await pushCount()).toBe(before);
  });

  it('a missing file, and a connection that is not Linked, push nothing', async () => {
    const missing = await ferry([...remote, 'push', 'customers', ...target, '--file', join(work, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');

    const pending = (await api.call('POST', `/companies/${linked.companyId}/connections`, { body: { platformKey: PLATFORM } })).body;
    const file = join(work, 'one.json');
    writeFileSync(file, '{"customerName": "Nobody"}');
    const result = await ferry([...remote, 'push', 'customers', '--company', linked.companyId, '--connection', pending.id, '--file', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is PendingAuth; only a Linked connection can push. Nothing was pushed.');
    // The command reaches the service this push did: its target flags come with it.
    expect(result.stderr).toContain(`hint: Authorize it: ferry ${remote.join(' ')} connections authorize --company ${linked.companyId} --connection ${pending.id} --tokens-file FILE   # its token fields: ferry integrations get ${PLATFORM}`);
  });
});

describe('ferry push --wait with the real push worker (async platform)', () => {
  const dataDir = tempDir('ferry-push-stack-');
  const work = tempDir('ferry-push-stack-work-');
  let stack: Stack;
  let linked: Linked;
  let customerId: string;
  let args: string[];

  beforeAll(async () => {
    const client = await startClientStack('Async Push Ltd', dataDir, work);
    stack = client.stack;
    linked = await linkedCompany(client.api, stack.sandboxUrl, PLATFORM, 10, { name: 'Async Target', seed: 61 });
    customerId = await platformCustomer(stack.sandboxUrl, linked);
    args = [...client.remote, 'push', 'invoices', '--company', linked.companyId, '--connection', linked.connectionId];
  });
  afterAll(() => stopClientStack(stack, dataDir, work));

  it('waits for Pending pushes to settle: Success and a later Failed make exit 3', async () => {
    await patchSandbox(stack.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 1 });
    const file = join(work, 'async.ndjson');
    writeFileSync(file, ndjson([invoice(customerId, { invoiceNumber: 'ASYNC-OK' }), invoice('nobody', { invoiceNumber: 'ASYNC-LATER-FAIL' })]));
    const result = await ferry(['--json', ...args, '--file', file, '--wait', '--timeout', '30s', '--poll-ms', '100']);
    expect(result.code, result.stderr).toBe(3);
    const doc = JSON.parse(result.stdout);
    expect(doc.results.map((r: any) => [r.line, r.status])).toEqual([[1, 'Success'], [2, 'Failed']]);
    expect(doc.results[1].validation).toEqual([{ itemId: 'customerRef.id', message: expect.stringContaining('does not match'), validatorName: 'Platform' }]);
  });

  it('piped: a Pending record\'s line is printed once, when it settles; all Success is exit 0', async () => {
    await patchSandbox(stack.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 1 });
    const file = join(work, 'one.json');
    writeFileSync(file, JSON.stringify(invoice(customerId, { invoiceNumber: 'ASYNC-2' })));
    const result = await ferry([...args, '--file', file, '--wait', '--poll-ms', '100']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^1\\t${UUID}\\tSuccess\\t\\n$`));

    const noWait = await ferry([...args, '--file', file]);
    expect(noWait.code, noWait.stderr).toBe(0);
    expect(noWait.stdout).toMatch(new RegExp(`^1\\t${UUID}\\tPending\\t\\n$`));
  });

  it('--timeout expiring with pushes still Pending: exit 1 naming them, nothing cancelled', async () => {
    await patchSandbox(stack.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 3600 });
    const file = join(work, 'slow.json');
    writeFileSync(file, JSON.stringify(invoice(customerId, { invoiceNumber: 'ASYNC-SLOW' })));
    const result = await ferry([...args, '--file', file, '--wait', '--timeout', '1s', '--poll-ms', '100']);
    expect(result.code).toBe(1);
    const [line] = result.stdout.split('\n');
    const key = line!.split('\t')[1]!;
    expect(line).toBe(`1\t${key}\tPending\t`);
    expect(result.stderr).toContain(`Timed out after 1s with 1 push operation still Pending: ${key} (line 1).`);
    expect(result.stderr).toContain('They were not cancelled');
    await patchSandbox(stack.sandboxUrl, { pushMode: 'sync', pushDelaySeconds: 5 });
  });
});

describe('ferry push never resends a POST whose outcome is unknown', () => {
  it('a 500 is an Error result for that record only, sent once; the next record still goes (exit 3)', async () => {
    const { createServer } = await import('node:http');
    const posts: string[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        response.setHeader('content-type', 'application/json; charset=utf-8');
        if (request.method === 'GET') {
          response.end(JSON.stringify({ id: 'conn-1', integrationKey: PLATFORM, platformName: 'Xero', status: 'Linked', dataConnectionErrors: null }));
          return;
        }
        posts.push(body);
        if (posts.length === 1) {
          response.statusCode = 500;
          response.end(JSON.stringify({ statusCode: 500, error: 'Internal server error.', correlationId: '11111111-1111-4111-8111-111111111111' }));
          return;
        }
        response.end(JSON.stringify({ pushOperationKey: '22222222-2222-4222-8222-222222222222', status: 'Success', statusCode: 200, validation: { errors: [], warnings: [] }, errorMessage: null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const work = tempDir('ferry-push-500-');
    try {
      const { port } = server.address() as { port: number };
      writeFileSync(join(work, 'key'), 'k');
      writeFileSync(join(work, 'two.ndjson'), ndjson([{ customerName: 'First' }, { customerName: 'Second' }]));
      const result = await ferry(['--base-url', `http://127.0.0.1:${port}`, '--api-key-file', join(work, 'key'), 'push', 'customers', '--company', 'co-1', '--connection', 'conn-1', '--file', join(work, 'two.ndjson')]);
      expect(result.code, result.stderr).toBe(3);
      expect(posts).toEqual(['{"customerName":"First"}', '{"customerName":"Second"}']);
      const [first, second] = result.stdout.split('\n');
      expect(first).toBe('1\t\tError\tInternal server error. [HTTP 500, correlation id 11111111-1111-4111-8111-111111111111]; the push may or may not have been created, so it was not resent');
      expect(second).toBe('2\t22222222-2222-4222-8222-222222222222\tSuccess\t');
      expect(result.stderr).toContain('check the company\'s push operations before pushing it again');
    } finally {
      server.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
