// An account's attachment space on both stores: the quota and the record's file limit
// refuse an insert with how far along they were; the usage goes down again with every
// deletion (a file, a connection's cascade, a company's); and uploads racing for the last
// bytes (or the last file of a record) get in only as many as fit, on SQLite, whose
// transactions take turns, and on PostgreSQL with two pools standing in for two API
// instances, whose transactions run side by side.
import type { Pool } from 'pg';
import { afterAll, expect, it } from 'vitest';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { AttachmentInput, AttachmentLimits } from '../../../src/service/store/attachments.js';
import { createPgStore } from '../../../src/service/store/pg/pg-store.js';
import { describePostgres } from '../../helpers/postgres.js';
import { staged } from './attachment-bytes.js';
import { makeOwners, relabel, secondPool, type Owners } from './owners.js';
import { freshPostgres, freshSqlite, onBoth } from './stores.js';

const whole = (db: unknown): AsyncStore => createPgStore(db as Pool);
const pools: Pool[] = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

let n = 0;
function attachment(o: Owners, size: number, fields: Partial<AttachmentInput> = {}): AttachmentInput {
  const id = `f${++n}`;
  return {
    id, client_id: o.client, company_id: o.a, connection_id: o.a1, data_type: 'invoices', record_id: 'inv-1', file_name: `${id}.pdf`,
    content_type: 'application/pdf', size, sha256: `sha-${id}`, created: '2024-03-01T10:00:00Z', ...fields,
  };
}

/** As the upload route stores a file: in a transaction of its own. */
async function upload(store: AsyncStore, row: AttachmentInput, limits: AttachmentLimits) {
  const file = await staged(Buffer.alloc(row.size, 7));
  const result = await store.transaction((tx) => tx.insertAttachment(row, file, limits));
  return 'row' in result ? 'stored' : result;
}

describePostgres('attachment space contract', () => {
  it('refuses past the quota or the record\'s file limit, saying how far along each was', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const o = await makeOwners(store);
      const other = await makeOwners(store);
      const limits = { quotaBytes: 100, perRecord: 3 };
      const answers = {
        // Up to the byte: 60 + 40 fits, one more byte does not, in any record or company of the account.
        first: await upload(store, attachment(o, 60), limits),
        exact: await upload(store, attachment(o, 40, { record_id: 'inv-2', company_id: o.b, connection_id: o.b1 }), limits),
        over: await upload(store, attachment(o, 1, { record_id: 'inv-3' }), limits),
        // Another account has its own quota; the third file of one record is its last.
        otherAccount: [
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a1 }), limits),
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a1 }), limits),
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a1 }), limits),
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a1 }), limits),
        ],
        // The same record id under another connection or data type is another record.
        otherRecords: [
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a2 }), limits),
          await upload(store, attachment(other, 10, { client_id: other.client, company_id: other.a, connection_id: other.a1, data_type: 'bills' }), limits),
        ],
        used: [await store.attachmentBytesUsed(o.client), await store.attachmentBytesUsed(other.client), await store.attachmentBytesUsed('nobody')],
      };
      return relabel(answers, new Map([...o.names, ...other.names]));
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({
      first: 'stored', exact: 'stored', over: { refused: 'quota', usedBytes: 100 },
      otherAccount: ['stored', 'stored', 'stored', { refused: 'record', files: 3 }],
      otherRecords: ['stored', 'stored'],
      used: [100, 50, 0],
    });
  });

  it('gives the space back when a file, a connection or a company is deleted, so a new upload fits again', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const o = await makeOwners(store);
      const limits = { quotaBytes: 1000, perRecord: 20 };
      const a1 = attachment(o, 100);
      for (const row of [a1, attachment(o, 200), attachment(o, 300, { connection_id: o.a2 }), attachment(o, 400, { company_id: o.b, connection_id: o.b1 })]) {
        await upload(store, row, limits);
      }
      const used = async () => store.attachmentBytesUsed(o.client);
      const steps: unknown[] = [await used(), await upload(store, attachment(o, 1), limits)];
      await store.transaction(async (tx) => tx.deleteAttachment({ connectionId: o.a1, dataType: 'invoices', recordId: 'inv-1' }, a1.id));
      steps.push(await used());
      await store.transaction(async (tx) => tx.deleteConnection(o.a2));
      steps.push(await used());
      await store.transaction(async (tx) => tx.deleteCompany(o.b));
      steps.push(await used(), await upload(store, attachment(o, 800), limits), await used());
      return steps;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([1000, { refused: 'quota', usedBytes: 1000 }, 900, 600, 200, 'stored', 1000]);
  });

  it('lets in only as many concurrent uploads as fit: the last bytes of the quota, the last file of a record', async () => {
    const race = async ([a, b]: [AsyncStore, AsyncStore]) => {
      const o = await makeOwners(a);
      // 70 of 100 bytes used: of eight 20-byte uploads at once, to eight records, one fits.
      await upload(a, attachment(o, 70, { record_id: 'base' }), { quotaBytes: 100, perRecord: 20 });
      const bytes = await Promise.all(Array.from({ length: 8 }, (_, i) => upload(i % 2 ? a : b, attachment(o, 20, { record_id: `inv-${i}` }), { quotaBytes: 100, perRecord: 20 })));
      // A record holding 2 of its 3 files: of six uploads at once, one gets in.
      const limits = { quotaBytes: 1_000_000, perRecord: 3 };
      for (let i = 0; i < 2; i++) await upload(a, attachment(o, 1, { record_id: 'full' }), limits);
      const files = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(i % 2 ? a : b, attachment(o, 1, { record_id: 'full' }), limits)));
      const record = await a.listAttachments({ connectionId: o.a1, dataType: 'invoices', recordId: 'full' });
      return {
        bytes: bytes.filter((r) => r === 'stored').length,
        files: files.filter((r) => r === 'stored').length,
        used: await a.attachmentBytesUsed(o.client),
        inRecord: record.length,
      };
    };
    const alone = freshSqlite();
    const sqlite = await race([alone, alone]);
    const pool = await freshPostgres();
    const other = secondPool(pool);
    pools.push(other, pool);
    const postgres = await race([createPgStore(pool), createPgStore(other)]);
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({ bytes: 1, files: 1, used: 70 + 20 + 3, inRecord: 3 });
  });
});
