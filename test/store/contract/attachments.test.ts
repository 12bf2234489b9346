// The attachment group: files and their bytes answer on PostgreSQL as on SQLite (which
// keeps the bytes in a file each, where PostgreSQL keeps them in the row).
import { expect, it } from 'vitest';
import type { AttachmentInput } from '../../../src/service/store/attachments.js';
import { attachmentMethods } from '../../../src/service/store/pg/attachments.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { bodyBytes, staged } from './attachment-bytes.js';
import { makeOwners, outcome, pgOwners, relabel, type Owners } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...attachmentMethods(db), ...pgOwners(db) });
const LIMITS = { quotaBytes: 1024 ** 3, perRecord: 20 };

function attachment(o: Owners, id: string, recordId: string, fields: Partial<AttachmentInput> = {}): AttachmentInput {
  return {
    id, client_id: o.client, company_id: o.a, connection_id: o.a1, data_type: 'invoices', record_id: recordId, file_name: `${id}.pdf`,
    content_type: 'application/pdf', size: 4, sha256: `sha-${id}`, created: '2024-03-01T10:00:00Z', ...fields,
  };
}

describePostgres('attachment store contract', () => {
  it('stores files against records and reads them back, bytes apart', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const binary = Buffer.from([0, 1, 2, 255, 0x5c, 0x27, 0]);
      const insert = async (row: AttachmentInput, bytes: Buffer) => store.insertAttachment(row, await staged(bytes), LIMITS);
      const inserted = [
        await insert(attachment(o, 'f1', 'inv-1'), Buffer.from('%PDF')),
        await insert(attachment(o, 'f2', 'inv-1', { file_name: 'photo é.png', content_type: 'image/png', size: binary.length }), binary),
        await insert(attachment(o, 'f3', 'inv-2', { size: 0 }), Buffer.alloc(0)),
        await insert(attachment(o, 'f4', 'inv-1', { connection_id: o.a2, size: 2 }), Buffer.from('a2')),
        await insert(attachment(o, 'f5', 'inv-1', { data_type: 'bills' }), Buffer.from('bill')),
      ];
      const inv1 = { connectionId: o.a1, dataType: 'invoices', recordId: 'inv-1' };
      const answers = {
        inserted,
        duplicate: await outcome(async () => insert(attachment(o, 'f1', 'inv-9', { size: 1 }), Buffer.from('x'))),
        unknownConnection: await outcome(async () => insert(attachment(o, 'f9', 'inv-9', { connection_id: 'nope', size: 1 }), Buffer.from('x'))),
        list: await store.listAttachments(inv1),
        listOther: await store.listAttachments({ ...inv1, connectionId: o.a2 }),
        listNone: await store.listAttachments({ ...inv1, recordId: 'inv-404' }),
        got: await store.getAttachment(inv1, 'f2'),
        wrongRecord: await store.getAttachment({ ...inv1, recordId: 'inv-2' }, 'f2'),
        wrongType: await store.getAttachment({ ...inv1, dataType: 'bills' }, 'f1'),
        missing: await store.getAttachment(inv1, 'nope'),
        contents: await Promise.all(['f1', 'f2', 'f3', 'nope'].map(async (id) => bodyBytes(await store.attachmentBody(id)))),
        used: await store.attachmentBytesUsed(o.client),
        deleteWrongRecord: await store.deleteAttachment({ ...inv1, recordId: 'inv-2' }, 'f2'),
        deleted: await store.deleteAttachment(inv1, 'f2'),
        deletedAgain: await store.deleteAttachment(inv1, 'f2'),
        afterDelete: { list: await store.listAttachments(inv1), body: await store.attachmentBody('f2'), used: await store.attachmentBytesUsed(o.client) },
      };
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.contents[1]).toEqual(Buffer.from([0, 1, 2, 255, 0x5c, 0x27, 0]));
    expect(Buffer.isBuffer(postgres.contents[2])).toBe(true);
    expect(sqlite.list.map((row) => row.id)).toEqual(['f1', 'f2']);
    expect([sqlite.used, sqlite.afterDelete.used]).toEqual([4 + 7 + 0 + 2 + 4, 4 + 0 + 2 + 4]);
    expect([sqlite.deleteWrongRecord, sqlite.deleted, sqlite.deletedAgain]).toEqual([false, true, false]);
  });
});
