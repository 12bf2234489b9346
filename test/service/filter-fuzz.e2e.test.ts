// Property-based fuzzing of every list filter of every list route, as an attacker with an
// ordinary client key would send them: random and hostile strings in `query`, `orderBy`,
// `tags`, `page`, `pageSize`, the delivery `status`, the event list's `after`, `limit`
// (and `cursor`, `types`, `companyId`), and the path segments that name a data type, a
// record, an attachment, a webhook consumer, a delivery or a data configuration. Whatever
// arrives: never a 5xx, never a record of another client, and an answer within a second.
// Heavy (the full run): thousands of generated requests, the most CPU of any service test.
import fc from 'fast-check';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../src/stack.js';
import { tempDir, type CallResult } from '../helpers/service.js';
import { apiClient, createClient, linkedCompany, readAll, sampleInvoice, waitFor, type Api, type Linked } from '../helpers/sync.js';
import { startTestStack } from '../helpers/stack.js';

const SEED = 20261123;
const RUNS = 400;
const ANSWER_WITHIN_MS = 1000;

/** Payloads a probe tries first: quoting escapes, SQL functions, subqueries, slow CTEs. */
const HOSTILE = [
  `'`, `"`, '`', `\\`, `' OR 1 --`, `' || char(34)) OR 1 OR ('`, `") OR 1 OR ("`, `'; DROP TABLE companies; --`,
  `1 OR 1=1`, `x' GLOB '*`, `(SELECT key_hash FROM api_keys)`, `json_extract(tags, '$')`,
  `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r`,
  `%`, `_`, `%_%`, `*`, `\u0000`, `\n`, `\r\n`, `é`, `😀`, `null`, `"null"`, `-1`, `0`, `1e308`, `NaN`,
  `9999999999999999999999`, `$.a`, `$."a"`, `a.b.c`, `tags.`, `-`, `--`, `,`, `{`, `}`, `&&`, `||`, `~`,
  'x'.repeat(3000),
];
const FIELDS = ['id', 'name', 'description', 'created', 'lastSync', 'status', 'tags.region', 'tags.ferryKey', 'integrationKey',
  'sourceId', 'dataType', 'requested', 'totalAmount', 'customerRef.id', 'issueDate', 'amountDue', 'currency', 'nope'];
const OPS = ['=', '!=', '~', '>', '<', '>=', '<='];

const hostile = fc.constantFrom(...HOSTILE);
const anyText = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 40 }), hostile);
const field = fc.oneof(fc.constantFrom(...FIELDS), anyText);
const clause = fc.tuple(field, fc.constantFrom(...OPS), anyText).map(([f, op, v]) => `${f}${op}${v}`);
const query = fc.oneof(anyText, clause, fc.array(clause, { minLength: 2, maxLength: 4 }).chain((cs) =>
  fc.constantFrom('&&', '||').map((glue) => cs.join(glue))), clause.map((c) => `{${c}}`));
const orderBy = fc.oneof(anyText, fc.array(fc.tuple(fc.boolean(), field).map(([d, f]) => `${d ? '-' : ''}${f}`), { minLength: 1, maxLength: 4 })
  .map((items) => items.join(',')));
const tags = fc.oneof(anyText, fc.tuple(anyText, anyText).map(([k, v]) => `${k}=${v}`), anyText.map((v) => `region=${v}`));
const number = fc.oneof(anyText, fc.integer().map(String), fc.constantFrom('1', '2', '5000', '5001', '0', '-1', '1.5', ' 1'));

const status = fc.oneof(anyText, fc.constantFrom('Pending', 'Delivered', 'Failed', 'pending', ''));
const eventTypes = fc.oneof(anyText, fc.constantFrom('company.created', 'read.completed,company.created', 'ferry.webhook.test', ',', ''));

const FILTERS = { query, orderBy, page: number, pageSize: number, tags, status, after: number, limit: number, cursor: anyText, types: eventTypes, companyId: anyText };
type Filter = keyof typeof FILTERS;

/** `name=value` percent-encoded; undefined for a lone surrogate, which no client can send. */
function encode(pairs: Array<[string, string]>): string | undefined {
  try {
    return pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  } catch {
    return undefined;
  }
}

/** A path segment as a client would send it; undefined for a lone surrogate. */
function segment(value: string): string | undefined {
  try {
    return encodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** One filter alone (so it reaches the SQL instead of failing on a sibling), or several at once. */
const searchOf = (names: Filter[]) => fc.oneof(
  ...names.map((name) => FILTERS[name].map((value) => encode([[name, value]]))),
  fc.tuple(...names.map((name) => fc.option(FILTERS[name], { freq: 1 }))).map((values) =>
    encode(values.flatMap((value, i) => (value === null ? [] : [[names[i]!, value] as [string, string]])))),
);

describe('every list filter of every list route, fuzzed by another client', () => {
  const dataDir = tempDir('ferry-fuzz-');
  let stack: Stack;
  let attacker: Api;
  let admin: Api;
  let victimClientId: string;
  let own: Linked;
  let theirs: Linked;
  let ownInvoiceId: string;
  let ownConsumerId: string;
  let ownDeliveryId: string;
  let ownAttachmentId: string;
  /** Every id and name of the victim's that an answer to the attacker must never hold. */
  const victimMarks: string[] = [];
  /** The victim's webhook consumer and its delivery, asked for by id in the refusal test. */
  const victimIds = { consumer: '', delivery: '', invoice: '', attachment: '' };
  const CUSTOM = 'fuzz-totals';
  const customConfig = { dataSource: '/invoices', requiredData: { number: '$[*].invoiceNumber', total: '$[*].totalAmount' }, keyBy: ['$[*].id'] };

  /** A webhook consumer (its receiver never resolves: deliveries stay in the log) with one delivery. */
  const consumerWithDelivery = async (api: Api, name: string): Promise<{ consumer: string; delivery: string }> => {
    const consumer = await api.call('POST', '/webhooks', { body: { url: `https://${name}.invalid/hook`, eventTypes: ['company.created', 'read.completed'] } });
    expect(consumer.status, consumer.text).toBe(201);
    const test = await api.call('POST', `/webhooks/${consumer.body.id}/test`);
    expect(test.status, test.text).toBe(202);
    return { consumer: consumer.body.id, delivery: test.body.id };
  };

  const attach = async (api: Api, linked: Linked, invoiceId: string, fileName: string): Promise<string> => {
    const path = `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices/${encodeURIComponent(invoiceId)}/attachment?fileName=${fileName}`;
    const uploaded = await api.call('POST', path, { rawBody: `%PDF-1.4 ${fileName}`, headers: { 'content-type': 'application/pdf' } });
    expect(uploaded.status, uploaded.text).toBe(200);
    return uploaded.body.id;
  };

  /** The custom data type configured and pulled, so list filters run over real records. */
  const customSynced = async (api: Api, linked: Linked): Promise<void> => {
    expect((await api.call('PUT', `/integrations/gbol/dataTypes/custom/${CUSTOM}`, { body: customConfig })).status).toBe(200);
    const pull = await api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/data/queue/custom/${CUSTOM}`);
    expect(pull.status, pull.text).toBe(200);
    await waitFor('the custom data type pulled', async () => (await api.call('GET', `/companies/${linked.companyId}/data/history/${pull.body.id}`)).body.status === 'Complete', 30_000);
  };

  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir, rateLimit: 0 });
    admin = apiClient(stack.baseUrl, stack.adminKey);
    const victim = apiClient(stack.baseUrl, await createClient(admin, stack.adminKey, 'Victim Ltd', 'Paid'));
    victimClientId = ((await admin.call('GET', '/admin/clients?query=name%3DVictim%20Ltd')).body.results[0].id);
    attacker = apiClient(stack.baseUrl, await createClient(admin, stack.adminKey, 'Attacker Ltd', 'Free'));
    theirs = await linkedCompany(victim, stack.sandboxUrl, 'gbol', 40, { seed: 1, name: 'Victim Holdings' });
    own = await linkedCompany(attacker, stack.sandboxUrl, 'gbol', 40, { seed: 2, name: 'Attacker Own' });
    for (const [api, linked] of [[victim, theirs], [attacker, own]] as const) {
      expect((await api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
      await waitFor('invoices synced', async () => (await api.call('GET', `/companies/${linked.companyId}/data/invoices`)).status === 200, 30_000);
    }
    const pushed = await victim.call('POST', `/companies/${theirs.companyId}/connections/${theirs.connectionId}/push/invoices`, {
      body: sampleInvoice('C-1'),
    });
    expect(pushed.status, pushed.text).toBeLessThan(300);
    victimMarks.push(theirs.companyId, theirs.connectionId, 'Victim Holdings', theirs.tenant.id);
    if (pushed.body?.pushOperationKey) victimMarks.push(pushed.body.pushOperationKey);
    const ownInvoices = await readAll(attacker, own.companyId, 'invoices');
    const ownIds = new Set(ownInvoices.map((r) => r.id));
    const victimInvoices = (await readAll(victim, theirs.companyId, 'invoices')).filter((invoice) => !ownIds.has(invoice.id));
    for (const invoice of victimInvoices) victimMarks.push(invoice.id);
    ownInvoiceId = ownInvoices[0].id;
    victimIds.invoice = victimInvoices[0].id;

    // What each account has beyond its data: webhook consumers and deliveries, attachments, data configurations.
    ({ consumer: ownConsumerId, delivery: ownDeliveryId } = await consumerWithDelivery(attacker, 'attacker'));
    ({ consumer: victimIds.consumer, delivery: victimIds.delivery } = await consumerWithDelivery(victim, 'victim'));
    ownAttachmentId = await attach(attacker, own, ownInvoiceId, 'attacker-own.pdf');
    victimIds.attachment = await attach(victim, theirs, victimIds.invoice, 'victim-ledger-secret.pdf');
    const supplemental = { supplementalDataConfig: { victimLedgerSource: { dataSource: '/Invoices', pullData: { number: '$[*].invoiceNumber' } } } };
    expect((await victim.call('PUT', '/integrations/gbol/dataTypes/invoices/supplementalDataConfig', { body: supplemental })).status).toBe(200);
    await customSynced(victim, theirs);
    await customSynced(attacker, own);
    victimMarks.push(victimIds.consumer, victimIds.delivery, victimIds.attachment, 'victim-ledger-secret.pdf', 'victim.invalid', 'victimLedgerSource');
    expect(victimMarks.length).toBeGreaterThan(10);
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** As the attacker, unless `as` is the admin (who may see every client, so only status and time count). */
  const check = async (path: string, as: Api = attacker): Promise<CallResult> => {
    const started = performance.now();
    const result = await as.call('GET', path);
    const elapsed = performance.now() - started;
    expect(result.status, `${path} → ${result.text.slice(0, 300)}`).toBeLessThan(500);
    expect(elapsed, `${path} took ${elapsed} ms`).toBeLessThan(ANSWER_WITHIN_MS);
    // An id the path asked for may be echoed by its 404; nothing else of the victim's may appear.
    const asked = (mark: string) => path.includes(mark) || path.includes(encodeURIComponent(mark));
    if (as === attacker) for (const mark of victimMarks) if (!asked(mark)) expect(result.text.includes(mark), `${path} leaked ${mark}`).toBe(false);
    return result;
  };

  const PAGED: Filter[] = ['query', 'orderBy', 'page', 'pageSize'];
  const routes: Array<[string, () => string, Filter[]]> = [
    ['GET /companies', () => '/companies', [...PAGED, 'tags']],
    ['GET /companies/{id}/connections', () => `/companies/${own.companyId}/connections`, PAGED],
    ['GET /companies/{id}/data/invoices', () => `/companies/${own.companyId}/data/invoices`, PAGED],
    ['GET /companies/{id}/data/history', () => `/companies/${own.companyId}/data/history`, PAGED],
    ['GET /companies/{id}/push', () => `/companies/${own.companyId}/push`, PAGED],
    ['GET /integrations', () => '/integrations', PAGED],
    ['GET /admin/clients (not an admin: 403)', () => '/admin/clients', PAGED],
    ['GET /admin/clients/{id}/apiKeys (not an admin: 403)', () => `/admin/clients/${victimMarks[0]}/apiKeys`, PAGED],
  ];

  const DELIVERIES: Filter[] = [...PAGED, 'status'];
  routes.push(
    ['GET /webhooks', () => '/webhooks', PAGED],
    ['GET /webhooks/{id}/deliveries', () => `/webhooks/${ownConsumerId}/deliveries`, DELIVERIES],
    ['GET /webhooks/{id}/deliveries/{id}', () => `/webhooks/${ownConsumerId}/deliveries/${ownDeliveryId}`, DELIVERIES],
    ['GET …/data/invoices/{id}/attachments', () => `/companies/${own.companyId}/connections/${own.connectionId}/data/invoices/${encodeURIComponent(ownInvoiceId)}/attachments`, PAGED],
    ['GET …/data/custom/{identifier}', () => `/companies/${own.companyId}/connections/${own.connectionId}/data/custom/${CUSTOM}`, PAGED],
    ['GET /integrations/{key}/dataTypes/invoices/supplementalDataConfig', () => '/integrations/gbol/dataTypes/invoices/supplementalDataConfig', PAGED],
    ['GET /events', () => '/events', ['after', 'limit', 'cursor', 'types', 'companyId']],
  );

  for (const [name, path, filters] of routes) {
    it(`${name}: random and hostile ${filters.join(', ')}`, async () => {
      await fc.assert(fc.asyncProperty(searchOf(filters), async (qs) => {
        if (qs === undefined) return;
        await check(`${path()}?${qs}`);
      }), { seed: SEED, numRuns: RUNS });
    });
  }

  // A client key is refused before the filters are read, so the admin lists are fuzzed with the admin key too.
  for (const [name, path] of [['GET /admin/clients', () => '/admin/clients'], ['GET /admin/clients/{id}/apiKeys', () => `/admin/clients/${victimClientId}/apiKeys`]] as const) {
    it(`${name} as the admin: random and hostile ${PAGED.join(', ')}`, async () => {
      await fc.assert(fc.asyncProperty(searchOf(PAGED), async (qs) => {
        if (qs === undefined) return;
        await check(`${path()}?${qs}`, admin);
      }), { seed: SEED, numRuns: RUNS });
    });
  }

  it('GET /companies/{id}/data/{dataType}: random and hostile data types', async () => {
    await fc.assert(fc.asyncProperty(anyText, searchOf(['query', 'orderBy']), async (dataType, qs) => {
      if (qs === undefined) return;
      let segment: string;
      try {
        segment = encodeURIComponent(dataType);
      } catch {
        return;
      }
      await check(`/companies/${own.companyId}/data/${segment}?${qs}`);
    }), { seed: SEED, numRuns: RUNS });
  });

  // Path segments that name a record, an attachment, a consumer, a delivery or a configuration.
  const ids = fc.oneof(anyText, fc.constantFrom('00000000-0000-4000-8000-000000000000', '0', '-1', '..', '%2e%2e'));
  const segmentRoutes: Array<[string, (a: string, b: string) => string]> = [
    ['GET …/data/{dataPath}/{recordId}/attachments', (a, b) => `/companies/${own.companyId}/connections/${own.connectionId}/data/${a}/${b}/attachments`],
    ['GET …/data/invoices/{id}/attachments/{attachmentId}(/download)', (a, b) => `/companies/${own.companyId}/connections/${own.connectionId}/data/invoices/${a}/attachments/${b}${a.length % 2 ? '/download' : ''}`],
    ['GET /webhooks/{id}(/deliveries/{id})', (a, b) => (b.length % 2 ? `/webhooks/${a}` : `/webhooks/${a}/deliveries/${b}`)],
    ['GET /integrations/{key}/dataTypes/{dataType}/supplementalDataConfig', (a, b) => `/integrations/${a}/dataTypes/${b}/supplementalDataConfig`],
    ['GET /integrations/{key}/dataTypes/custom/{identifier}', (a, b) => `/integrations/${a}/dataTypes/custom/${b}`],
    ['GET …/data/custom/{identifier}', (a) => `/companies/${own.companyId}/connections/${own.connectionId}/data/custom/${a}`],
  ];
  for (const [name, path] of segmentRoutes) {
    it(`${name}: random and hostile path segments`, async () => {
      await fc.assert(fc.asyncProperty(ids, ids, fc.boolean(), async (a, b, real) => {
        // Half the time one segment is a real one of the attacker's, so the other reaches further in.
        const first = segment(real ? 'invoices' : a);
        const second = segment(real ? [ownInvoiceId, ownAttachmentId, ownDeliveryId, CUSTOM][b.length % 4]! : b);
        if (first === undefined || second === undefined) return;
        await check(path(first, second));
      }), { seed: SEED, numRuns: RUNS });
    });
  }

  it('the victim\'s consumers, deliveries and attachments, by id, are refused to the attacker', async () => {
    const paths = [
      `/webhooks/${victimIds.consumer}`, `/webhooks/${victimIds.consumer}/deliveries`, `/webhooks/${victimIds.consumer}/deliveries/${victimIds.delivery}`,
      `/webhooks/${ownConsumerId}/deliveries/${victimIds.delivery}`,
      `/companies/${theirs.companyId}/connections/${theirs.connectionId}/data/invoices/${encodeURIComponent(victimIds.invoice)}/attachments`,
      `/companies/${theirs.companyId}/connections/${theirs.connectionId}/data/invoices/${encodeURIComponent(victimIds.invoice)}/attachments/${victimIds.attachment}/download`,
      `/companies/${own.companyId}/connections/${own.connectionId}/data/invoices/${encodeURIComponent(ownInvoiceId)}/attachments/${victimIds.attachment}`,
      `/companies/${theirs.companyId}/connections/${theirs.connectionId}/data/custom/${CUSTOM}`,
      `/events?companyId=${theirs.companyId}`,
    ];
    for (const path of paths) {
      const result = await check(path);
      if (!path.startsWith('/events')) expect([403, 404], path).toContain(result.status);
    }
  });

  it('the victim\'s company, by id, is refused to the attacker whatever the filters', async () => {
    const theirs = victimMarks[0]!;
    await fc.assert(fc.asyncProperty(searchOf(['query', 'orderBy', 'page']), async (qs) => {
      if (qs === undefined) return;
      for (const path of ['connections', 'data/invoices', 'data/history', 'push']) {
        const result = await check(`/companies/${theirs}/${path}?${qs}`);
        expect([400, 403, 404]).toContain(result.status);
      }
    }), { seed: SEED, numRuns: 40 });
  });
});
