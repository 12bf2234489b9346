// Paged lists over real HTTP, on GET /companies with 25 companies whose creation dates
// are a fixed permutation of 2026-01-01..25 (a manual clock): page/pageSize rules,
// _links, walking `next`, orderBy, and every query operator with its 400 texts.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { CallResult } from '../helpers/service.js';
import { createCompany, expectErrorBody, itemIds, MALFORMED, ManualClock, unknownProperty } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

interface Seed {
  name: string;
  created: string;
  description?: string;
  tags: Record<string, string>;
}

const SPECIAL_NAMES = ['Acme Ltd', 'acme holdings', 'A && B Trading', 'Who? Ltd', 'Zeta Corp'];
const pad = (n: number): string => String(n).padStart(2, '0');

/** Company n (1..25): created on day (7n mod 25) + 1 of January, so creation order ≠ date order. */
const SEEDS: Seed[] = Array.from({ length: 25 }, (_, i) => {
  const n = i + 1;
  const seed: Seed = {
    name: SPECIAL_NAMES[i] ?? `Company ${pad(n)}`,
    created: `2026-01-${pad(((7 * n) % 25) + 1)}T12:00:00Z`,
    tags: { idx: String(n), parity: n % 2 === 0 ? 'even' : 'odd', group: n <= 10 ? 'a' : 'b' },
  };
  if (n % 5 === 0) seed.description = `Description ${n}`;
  return seed;
});

const names = (seeds: Seed[]): string[] => seeds.map((s) => s.name);
const byText = (pick: (s: Seed) => string) => (a: Seed, b: Seed): number => {
  const x = pick(a).toLowerCase();
  const y = pick(b).toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

let t: TestService;
let key: string;

/** GET with the fixture client's key. */
const get = (path: string): Promise<CallResult> => t.call('GET', path, { apiKey: key });
const q = (query: string, pageSize = 100): string => `/companies?pageSize=${pageSize}&query=${encodeURIComponent(query)}`;

beforeAll(async () => {
  const clock = new ManualClock(new Date('2025-12-31T00:00:00Z'));
  t = await startTestStack('service', { clock });
  key = (await t.createClient('Paging Ltd', 'Paid')).apiKey;
  for (const seed of SEEDS) {
    clock.set(new Date(seed.created));
    const { created: _created, ...body } = seed;
    const company = await createCompany(t, key, body);
    expect(company.created).toBe(seed.created);
  }
});

afterAll(async () => {
  await t?.stop();
});

describe('page and pageSize', () => {
  interface PageScenario {
    name: string;
    search: string;
    status: number;
    pageNumber?: number;
    pageSize?: number;
    count?: number;
    invalid?: string;
  }

  const scenarios: PageScenario[] = [
    { name: 'defaults', search: '', status: 200, pageNumber: 1, pageSize: 100, count: 25 },
    { name: 'pageSize 1', search: 'pageSize=1', status: 200, pageNumber: 1, pageSize: 1, count: 1 },
    { name: 'pageSize 5000 (the maximum)', search: 'pageSize=5000', status: 200, pageNumber: 1, pageSize: 5000, count: 25 },
    { name: 'page 2 of 10', search: 'page=2&pageSize=10', status: 200, pageNumber: 2, pageSize: 10, count: 10 },
    { name: 'last page, partly full', search: 'page=3&pageSize=10', status: 200, pageNumber: 3, pageSize: 10, count: 5 },
    { name: 'page past the end', search: 'page=9&pageSize=10', status: 200, pageNumber: 9, pageSize: 10, count: 0 },
    { name: 'largest page number', search: 'page=9007199254740991&pageSize=5000', status: 200, pageNumber: 9007199254740991, pageSize: 5000, count: 0 },
    { name: 'page beyond a safe integer', search: 'page=9007199254740992', status: 400, invalid: 'page' },
    { name: 'pageSize 0', search: 'pageSize=0', status: 400, invalid: 'pageSize' },
    { name: 'pageSize 5001', search: 'pageSize=5001', status: 400, invalid: 'pageSize' },
    { name: 'pageSize -1', search: 'pageSize=-1', status: 400, invalid: 'pageSize' },
    { name: 'pageSize abc', search: 'pageSize=abc', status: 400, invalid: 'pageSize' },
    { name: 'pageSize 1.5', search: 'pageSize=1.5', status: 400, invalid: 'pageSize' },
    { name: 'pageSize 1e3', search: 'pageSize=1e3', status: 400, invalid: 'pageSize' },
    { name: 'page 0', search: 'page=0', status: 400, invalid: 'page' },
    { name: 'page -1', search: 'page=-1', status: 400, invalid: 'page' },
    { name: 'page abc', search: 'page=abc', status: 400, invalid: 'page' },
    { name: 'page 1.5', search: 'page=1.5', status: 400, invalid: 'page' },
    { name: 'page given twice', search: 'page=1&page=2', status: 400, invalid: 'page' },
  ];

  it.each(scenarios)('$name ($search) → $status', async ({ search, status, pageNumber, pageSize, count, invalid }) => {
    const result = await get(`/companies${search ? `?${search}` : ''}`);
    if (invalid) {
      expectErrorBody(result, status);
      expect(itemIds(result)).toEqual([invalid]);
      return;
    }
    expect(result.status, result.text).toBe(status);
    expect(Object.keys(result.body).sort()).toEqual(['_links', 'pageNumber', 'pageSize', 'results', 'totalResults']);
    expect(result.body).toMatchObject({ pageNumber, pageSize, totalResults: 25 });
    expect(result.body.results).toHaveLength(count!);
  });

  it('pages in the default (creation) order', async () => {
    const second = await get('/companies?page=2&pageSize=10');
    expect(second.body.results.map((c: { name: string }) => c.name)).toEqual(names(SEEDS.slice(10, 20)));
  });
});

describe('_links', () => {
  const enc = encodeURIComponent;
  const FILTER = 'tags.group=b && name~company';
  const FILTERED = `query=${enc(FILTER)}`;

  interface LinkScenario {
    name: string;
    path: string;
    total: number;
    links: { self: string; current: string; next?: string; previous?: string };
  }

  const scenarios: LinkScenario[] = [
    {
      name: 'no parameters: self and current only',
      path: '/companies',
      total: 25,
      links: { self: '/companies', current: '/companies?page=1&pageSize=100' },
    },
    {
      name: 'first page: no previous',
      path: '/companies?pageSize=10',
      total: 25,
      links: { self: '/companies', current: '/companies?page=1&pageSize=10', next: '/companies?page=2&pageSize=10' },
    },
    {
      name: 'middle page: next and previous',
      path: '/companies?page=2&pageSize=10',
      total: 25,
      links: {
        self: '/companies', current: '/companies?page=2&pageSize=10', next: '/companies?page=3&pageSize=10', previous: '/companies?page=1&pageSize=10',
      },
    },
    {
      name: 'last page: no next',
      path: '/companies?page=3&pageSize=10',
      total: 25,
      links: { self: '/companies', current: '/companies?page=3&pageSize=10', previous: '/companies?page=2&pageSize=10' },
    },
    {
      name: 'page past the end: self, current, previous (the last page)',
      path: '/companies?page=5&pageSize=10',
      total: 25,
      links: { self: '/companies', current: '/companies?page=5&pageSize=10', previous: '/companies?page=3&pageSize=10' },
    },
    {
      name: 'query with spaces and && is URL-encoded in every link; totalResults counts matches',
      path: `/companies?${FILTERED}&pageSize=5&orderBy=-name&page=2`,
      total: 15,
      links: {
        self: '/companies',
        current: `/companies?page=2&pageSize=5&${FILTERED}&orderBy=-name`,
        next: `/companies?page=3&pageSize=5&${FILTERED}&orderBy=-name`,
        previous: `/companies?page=1&pageSize=5&${FILTERED}&orderBy=-name`,
      },
    },
    {
      name: "a literal '?' inside a value survives",
      path: '/companies?query=name=Who? Ltd',
      total: 1,
      links: { self: '/companies', current: `/companies?page=1&pageSize=100&query=${enc('name=Who? Ltd')}` },
    },
    {
      name: "'+' in a value is a space",
      path: '/companies?query=name%3DAcme+Ltd',
      total: 1,
      links: { self: '/companies', current: `/companies?page=1&pageSize=100&query=${enc('name=Acme Ltd')}` },
    },
  ];

  it.each(scenarios)('$name', async ({ path, total, links }) => {
    const result = await get(path);
    expect(result.status, result.text).toBe(200);
    expect(result.body.totalResults).toBe(total);
    const hrefs = Object.fromEntries(Object.entries(result.body._links).map(([rel, link]) => [rel, (link as { href: string }).href]));
    expect(hrefs).toEqual(links);
    for (const link of Object.values(result.body._links)) expect(Object.keys(link as object)).toEqual(['href']);
  });

  it('round-trips every parameter when following the links', async () => {
    const first = await get(`/companies?pageSize=5&${FILTERED}&orderBy=-name`);
    const again = await get(first.body._links.current.href);
    expect(again.body).toEqual(first.body);
    const second = await get(first.body._links.next.href);
    expect(second.body.pageNumber).toBe(2);
    expect(second.body.totalResults).toBe(15);
    expect(second.body._links.current.href).toBe(first.body._links.next.href);
    expect((await get(second.body._links.previous.href)).body).toEqual(first.body);
  });

  it.each([
    { pageSize: 7, query: '' },
    { pageSize: 4, query: FILTER },
    { pageSize: 25, query: '' },
    { pageSize: 1, query: 'name~acme' },
  ])('following next (pageSize $pageSize, query "$query") visits every record once, in ceil(total/pageSize) pages', async ({ pageSize, query }) => {
    const everything = await get(`/companies?pageSize=5000${query ? `&query=${enc(query)}` : ''}`);
    const total: number = everything.body.totalResults;
    const seen: string[] = [];
    let href: string | undefined = `/companies?pageSize=${pageSize}${query ? `&query=${enc(query)}` : ''}`;
    let pages = 0;
    while (href) {
      const page = await get(href);
      expect(page.status).toBe(200);
      pages += 1;
      expect(page.body.pageNumber).toBe(pages);
      expect(page.body.totalResults).toBe(total);
      seen.push(...page.body.results.map((c: { id: string }) => c.id));
      href = page.body._links.next?.href;
      expect(pages).toBeLessThanOrEqual(total);
    }
    expect(pages).toBe(Math.max(1, Math.ceil(total / pageSize)));
    expect(seen).toEqual(everything.body.results.map((c: { id: string }) => c.id));
    expect(new Set(seen).size).toBe(total);
  });
});

describe('orderBy', () => {
  const byName = byText((s) => s.name);
  const byCreated = byText((s) => s.created);
  const byIdx = byText((s) => s.tags.idx!);
  const stable = (compare: (a: Seed, b: Seed) => number) => (a: Seed, b: Seed) => compare(a, b) || SEEDS.indexOf(a) - SEEDS.indexOf(b);

  it.each([
    { orderBy: 'name', expected: [...SEEDS].sort(stable(byName)) },
    { orderBy: '-name', expected: [...SEEDS].sort(stable((a, b) => byName(b, a))) },
    { orderBy: 'created', expected: [...SEEDS].sort(stable(byCreated)) },
    { orderBy: '-created', expected: [...SEEDS].sort(stable((a, b) => byCreated(b, a))) },
    { orderBy: 'tags.idx', expected: [...SEEDS].sort(stable(byIdx)) },
    { orderBy: 'tags.group,-created', expected: [...SEEDS].sort(stable((a, b) => byText((s) => s.tags.group!)(a, b) || byCreated(b, a))) },
    { orderBy: 'tags.parity', expected: [...SEEDS].sort(stable(byText((s) => s.tags.parity!))) },
  ])('orderBy=$orderBy', async ({ orderBy, expected }) => {
    const result = await get(`/companies?orderBy=${encodeURIComponent(orderBy)}`);
    expect(result.status, result.text).toBe(200);
    expect(result.body.results.map((c: { name: string }) => c.name)).toEqual(names(expected));
  });

  it('orders before paging', async () => {
    const page = await get('/companies?orderBy=-created&page=2&pageSize=5');
    expect(page.body.results.map((c: { created: string }) => c.created)).toEqual(
      ['2026-01-20', '2026-01-19', '2026-01-18', '2026-01-17', '2026-01-16'].map((d) => `${d}T12:00:00Z`),
    );
  });
});

describe('query operators', () => {
  const n = (s: Seed): number => Number(s.tags.idx);
  const day = (s: Seed): number => Number(s.created.slice(8, 10));

  const scenarios: Array<{ query: string; match: (s: Seed) => boolean }> = [
    { query: 'name=Acme Ltd', match: (s) => s.name === 'Acme Ltd' },
    { query: 'name=ACME LTD', match: (s) => s.name === 'Acme Ltd' },
    { query: '  name  =  acme ltd  ', match: (s) => s.name === 'Acme Ltd' },
    { query: 'name!=Acme Ltd', match: (s) => s.name !== 'Acme Ltd' },
    { query: 'name~acme', match: (s) => s.name.toLowerCase().includes('acme') },
    { query: 'name~COMPANY 1', match: (s) => s.name.startsWith('Company 1') },
    { query: 'name~%', match: () => false },
    { query: 'name=Who? Ltd', match: (s) => s.name === 'Who? Ltd' },
    { query: 'name="A && B Trading"', match: (s) => s.name === 'A && B Trading' },
    { query: 'name = "acme ltd" || name="Zeta Corp"', match: (s) => s.name === 'Acme Ltd' || s.name === 'Zeta Corp' },
    { query: 'created=2026-01-05T12:00:00Z', match: (s) => day(s) === 5 },
    { query: 'created!=2026-01-05T12:00:00Z', match: (s) => day(s) !== 5 },
    { query: 'created>2026-01-20', match: (s) => day(s) >= 20 },
    { query: 'created<2026-01-05T12:00:00Z', match: (s) => day(s) < 5 },
    { query: 'created>=2026-01-05T12:00:00Z', match: (s) => day(s) >= 5 },
    { query: 'created<=2026-01-05T12:00:00Z', match: (s) => day(s) <= 5 },
    { query: 'created>2026-01-10T13:00:00+02:00', match: (s) => day(s) >= 10 },
    { query: 'created>=2026-01-03 && created<=2026-01-06', match: (s) => day(s) >= 3 && day(s) <= 5 },
    { query: 'tags.group=a', match: (s) => n(s) <= 10 },
    { query: 'tags.parity=EVEN', match: (s) => n(s) % 2 === 0 },
    { query: 'tags.group!=a', match: (s) => n(s) > 10 },
    { query: 'tags.nosuchtag=x', match: () => false },
    { query: 'description=null', match: (s) => s.description === undefined },
    { query: 'description!=null', match: (s) => s.description !== undefined },
    { query: 'tags.group=a && tags.parity=even', match: (s) => n(s) <= 10 && n(s) % 2 === 0 },
    { query: 'tags.group=a || name~zeta', match: (s) => n(s) <= 10 || s.name === 'Zeta Corp' },
    { query: 'name~acme || tags.group=b && tags.parity=even', match: (s) => s.name.toLowerCase().includes('acme') || (n(s) > 10 && n(s) % 2 === 0) },
    { query: '{name~acme || tags.group=b} && tags.parity=even', match: (s) => (s.name.toLowerCase().includes('acme') || n(s) > 10) && n(s) % 2 === 0 },
    { query: '{ {tags.idx=1} || {tags.idx=25} }', match: (s) => n(s) === 1 || n(s) === 25 },
  ];

  it.each(scenarios)('query=$query', async ({ query, match }) => {
    const expected = names(SEEDS.filter(match));
    const result = await get(q(query, 3));
    expect(result.status, result.text).toBe(200);
    expect(result.body.totalResults).toBe(expected.length);
    const all = await get(q(query));
    expect(all.body.results.map((c: { name: string }) => c.name)).toEqual(expected);
  });

  it('accepts a 2048-character query', async () => {
    const query = `name=${'x'.repeat(2043)}`;
    expect(query).toHaveLength(2048);
    const result = await get(q(query));
    expect(result.status, result.text).toBe(200);
    expect(result.body.totalResults).toBe(0);
  });
});

describe('query and orderBy errors, word for word', () => {
  const malformed = [
    'name',
    'name=',
    '=acme',
    'name acme',
    '{name=acme',
    'name=acme}',
    'name=acme &&',
    '&& name=acme',
    'name=acme ||',
    '{}',
    'name=A && B Trading',
    'name="unterminated',
    'name="a"b',
    'name="bad \\x escape"',
    'name>acme',
    'tags.group<=a',
    'created~2026',
    'created>yesterday',
    'created>2026-02-30',
    'tags..group=a',
    `name=${'x'.repeat(2044)}`,
  ];

  it.each(malformed.map((query) => ({ query, label: query.length > 60 ? `${query.length}-character query` : query })))(
    'query=$label → Malformed query',
    async ({ query }) => {
      expectErrorBody(await get(q(query)), 400, MALFORMED);
    },
  );

  it.each([
    { search: `query=${encodeURIComponent('foo=1')}`, path: 'foo' },
    { search: `query=${encodeURIComponent('name=acme && bar.baz~x')}`, path: 'bar.baz' },
    { search: `query=${encodeURIComponent('tags=x')}`, path: 'tags' },
    { search: `query=${encodeURIComponent('dataConnections.status=Linked')}`, path: 'dataConnections.status' },
    { search: 'orderBy=foo', path: 'foo' },
    { search: 'orderBy=-foo', path: 'foo' },
    { search: 'orderBy=name,-foo', path: 'foo' },
  ])('$search → Could not resolve property $path', async ({ search, path }) => {
    expectErrorBody(await get(`/companies?${search}`), 400, unknownProperty(path));
  });

  it.each(['-', 'name;drop', 'name,,created', '--name'])('orderBy=%s → Malformed query', async (orderBy) => {
    expectErrorBody(await get(`/companies?orderBy=${encodeURIComponent(orderBy)}`), 400, MALFORMED);
  });
});
