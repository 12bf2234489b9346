// The render pool on its own, with real render threads and no service: which renders it
// takes, in which order, and what it keeps. A render is admitted or refused before anything
// is drawn, so these checks do not depend on how long a render takes. The same behaviour
// over HTTP is in invoice-pdf.test.ts; timing is bench/fairness.mjs's.
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_RENDERS_PER_CLIENT, RenderPool } from '../../src/service/documents/render-pool.js';

/** An invoice record's JSON text, numbered `number`, of `lines` lines. */
const invoice = (number: string, lines = 1) => JSON.stringify({
  id: number, invoiceNumber: number, currency: 'GBP',
  lineItems: Array.from({ length: lines }, (_, n) => ({ description: `Line ${n + 1}`, quantity: 1, totalAmount: 1 })),
});

let pool: RenderPool | undefined;
let reads = 0;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** The PDF of `record` as invoice `invoiceId` of `companyId`, read from snapshot `generation`; counts the record's reads. */
function pdf(client: string, companyId: string, invoiceId: string, record: string, generation = 1) {
  return pool!.invoicePdf(client, { companyId, invoiceId, generation }, async () => {
    reads++;
    return record;
  });
}

describe('RenderPool', () => {
  it(`refuses a client's render past ${MAX_RENDERS_PER_CLIENT} under way (429, Retry-After); other clients, and the same PDF again, are served`, async () => {
    pool = new RenderPool({ threads: 1 });
    const a1 = pdf('A', 'c1', 'i1', invoice('A-1'));
    const a2 = pdf('A', 'c1', 'i2', invoice('A-2'));
    const refused = pdf('A', 'c1', 'i3', invoice('A-3'));
    const joined = pdf('A', 'c1', 'i1', invoice('A-1'));
    const theirs = pdf('B', 'c2', 'i1', invoice('B-1'));
    await expect(refused).rejects.toMatchObject({ statusCode: 429, headers: { 'Retry-After': '2' } });
    expect(pool.held('A')).toBe(2);
    const [first, second, again, other] = await Promise.all([a1, a2, joined, theirs]);
    expect([first.invoiceNumber, second.invoiceNumber, other.invoiceNumber]).toEqual(['A-1', 'A-2', 'B-1']);
    expect(again).toBe(first);
    expect(pool.rendered()).toBe(3);
    expect(pool.held('A')).toBe(0);
    await expect(pdf('A', 'c1', 'i3', invoice('A-3'))).resolves.toMatchObject({ invoiceNumber: 'A-3' });
  });

  it('takes clients in turn at the render thread', async () => {
    pool = new RenderPool({ threads: 1 });
    const finished: string[] = [];
    const draw = (client: string, id: string) => pdf(client, `company-${client}`, id, invoice(`${client}-${id}`)).then((drawn) => finished.push(drawn.invoiceNumber!));
    await Promise.all([draw('A', '1'), draw('A', '2'), draw('B', '1')]);
    expect(finished).toEqual(['A-1', 'B-1', 'A-2']);
  });

  it('draws a record once when its render finishes while another request is still reading it', async () => {
    pool = new RenderPool({ threads: 1 });
    const record = invoice('SLOW-1');
    let release!: () => void;
    const readHeld = new Promise<void>((resolve) => { release = resolve; });
    // The second request misses the cache, then waits on its read until the first PDF is drawn.
    const first = pdf('A', 'c1', 'i1', record);
    const late = pool.invoicePdf('A', { companyId: 'c1', invoiceId: 'i1', generation: 1 }, async () => {
      await readHeld;
      return record;
    });
    const drawn = await first;
    release();
    expect(await late).toBe(drawn);
    expect(pool.rendered()).toBe(1);
  });

  it('keeps a PDF until its record changes: the same snapshot is not read again, a new one with the same record is not drawn again', async () => {
    pool = new RenderPool({ threads: 1 });
    reads = 0;
    const first = await pdf('A', 'c1', 'i1', invoice('A-1'), 1);
    expect(first.pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(await pdf('A', 'c1', 'i1', invoice('A-1'), 1)).toBe(first);
    expect([reads, pool.rendered()]).toEqual([1, 1]);
    expect(await pdf('A', 'c1', 'i1', invoice('A-1'), 2)).toBe(first);
    expect(await pdf('A', 'c1', 'i1', invoice('A-1'), 2)).toBe(first);
    expect([reads, pool.rendered()]).toEqual([2, 1]);

    const changed = await pdf('A', 'c1', 'i1', invoice('A-1', 2), 3);
    expect([reads, pool.rendered()]).toEqual([3, 2]);
    expect(changed.pdf.equals(first.pdf)).toBe(false);
    expect(pool.cachedBytes('A')).toBe(changed.pdf.length);
    expect(await pdf('A', 'c1', 'i1', invoice('A-1', 2), 3)).toBe(changed);
    // Another client's invoice of the same ids and content is its own.
    await pdf('B', 'c1', 'i1', invoice('A-1', 2), 3);
    expect(pool.rendered()).toBe(3);
  });

  it('a record that cannot be read (its 404) is refused as it was thrown, and draws nothing', async () => {
    pool = new RenderPool({ threads: 1 });
    const gone = new Error('No invoices record x');
    await expect(pool.invoicePdf('A', { companyId: 'c1', invoiceId: 'x', generation: 1 }, () => Promise.reject(gone))).rejects.toBe(gone);
    expect([pool.rendered(), pool.held('A')]).toEqual([0, 0]);
  });

  it('keeps PDFs within its byte bounds, and one client cannot push out another\'s', async () => {
    const limits = { maxBytes: 16_000, maxBytesPerClient: 10_000 };
    pool = new RenderPool({ threads: 1, cache: limits });
    const theirs = await pdf('B', 'c2', 'b1', invoice('B-1'));
    expect(pool.cachedBytes('B')).toBe(theirs.pdf.length);
    for (let i = 0; i < 10; i++) {
      await pdf('A', 'c1', `a${i}`, invoice(`A-${i}`));
      expect(pool.cachedBytes('A')).toBeLessThanOrEqual(limits.maxBytesPerClient);
      expect(pool.cachedBytes()).toBeLessThanOrEqual(limits.maxBytes);
    }
    expect(pool.cachedBytes('A')).toBeGreaterThan(limits.maxBytesPerClient / 2);
    expect(pool.cachedBytes('B')).toBe(theirs.pdf.length);
    // The oldest of A's went: drawn again; the newest is still kept.
    const rendered = pool.rendered();
    await pdf('A', 'c1', 'a9', invoice('A-9'));
    expect(pool.rendered()).toBe(rendered);
    await pdf('A', 'c1', 'a0', invoice('A-0'));
    expect(pool.rendered()).toBe(rendered + 1);
  });

  it('a render that fails fails alone; the next is drawn', async () => {
    pool = new RenderPool({ threads: 1 });
    await expect(pdf('A', 'c1', 'bad', '{ not json')).rejects.toThrow(/JSON/);
    await expect(pdf('A', 'c1', 'good', invoice('OK-1'))).resolves.toMatchObject({ invoiceNumber: 'OK-1' });
  });

  it('closing ends the render under way and refuses what waits and what comes (503)', async () => {
    pool = new RenderPool({ threads: 1 });
    const running = pdf('A', 'c1', 'long', invoice('LONG-1', 5000));
    const waiting = pdf('B', 'c2', 'short', invoice('SHORT-1'));
    const refused = [expect(waiting).rejects.toMatchObject({ statusCode: 503 }), expect(running).rejects.toMatchObject({ statusCode: 503 })];
    // Both asked for before the pool closes.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.held('A') + pool.held('B')).toBe(2);
    await pool.close();
    await Promise.all(refused);
    await expect(pdf('A', 'c1', 'late', invoice('LATE-1'))).rejects.toMatchObject({ statusCode: 503 });
  });
});
