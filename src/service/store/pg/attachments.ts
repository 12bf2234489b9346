// Attachments on PostgreSQL: files uploaded against a synced record, with their bytes in
// the row (bytea), since every instance on the database must read them; ../sqlite/attachments.ts
// keeps the same rows in SQLite. An upload locks its account's usage row before it checks
// the quota and the record's file limit, so the uploads of one account take turns from
// there to their commit and cannot pass a limit together; the usage itself is kept by the
// trigger of 012_attachment_space.sql. The bytes go in by COPY, streamed from the staged
// file (copy-in.ts).
import type { AsyncStore } from '../async-store.js';
import type { AttachmentStore } from '../store.js';
import type { AttachmentRow } from '../attachments.js';
import { copyRowWithFile } from './copy-in.js';
import { row, rows, run, type Queryable } from './query.js';

type AttachmentMethods = Pick<AsyncStore, keyof AttachmentStore>;

/** Every column but the bytes, which only attachmentBody reads. */
const COLUMNS = 'seq, id, client_id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, created';

/** The columns a COPY fills, the bytes last. */
const COPIED = ['id', 'client_id', 'company_id', 'connection_id', 'data_type', 'record_id', 'file_name', 'content_type', 'size', 'sha256', 'created', 'content'];

/**
 * The account's usage row, made if need be and locked: ON CONFLICT DO UPDATE locks the
 * row and returns its latest committed bytes, even those a transaction that held the lock
 * before committed after this statement began.
 */
const LOCK_USAGE = `INSERT INTO attachment_usage (client_id, bytes) VALUES (?, 0)
  ON CONFLICT (client_id) DO UPDATE SET bytes = attachment_usage.bytes RETURNING bytes`;

export function attachmentMethods(db: Queryable): AttachmentMethods {
  return {
    insertAttachment: async (attachment, staged, limits) => {
      const usedBytes = (await row<{ bytes: number }>(db, LOCK_USAGE, [attachment.client_id]))!.bytes;
      if (usedBytes + attachment.size > limits.quotaBytes) return { refused: 'quota', usedBytes };
      const files = (await row<{ files: number }>(db, 'SELECT count(*) AS files FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ?',
        [attachment.connection_id, attachment.data_type, attachment.record_id]))!.files;
      if (files >= limits.perRecord) return { refused: 'record', files };
      const a = attachment;
      await copyRowWithFile(db, 'attachments', COPIED, [a.id, a.client_id, a.company_id, a.connection_id, a.data_type, a.record_id, a.file_name,
        a.content_type, a.size, a.sha256, a.created], staged, a.size);
      return { row: (await row<AttachmentRow>(db, `SELECT ${COLUMNS} FROM attachments WHERE id = ?`, [a.id]))! };
    },
    attachmentBytesUsed: async (clientId) => (await row<{ bytes: number }>(db, 'SELECT bytes FROM attachment_usage WHERE client_id = ?', [clientId]))?.bytes ?? 0,
    listAttachments: (record) => rows<AttachmentRow>(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? ORDER BY seq`,
      [record.connectionId, record.dataType, record.recordId]),
    getAttachment: (record, id) => row<AttachmentRow>(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? AND id = ?`,
      [record.connectionId, record.dataType, record.recordId, id]),
    attachmentBody: async (id) => {
      const found = await row<{ content: Buffer }>(db, 'SELECT content FROM attachments WHERE id = ?', [id]);
      return found && { bytes: found.content };
    },
    deleteAttachment: async (record, id) => await run(db, 'DELETE FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? AND id = ?',
      [record.connectionId, record.dataType, record.recordId, id]) > 0,
  };
}
