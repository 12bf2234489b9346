// Attachments on PostgreSQL: files uploaded against a synced record, with their bytes
// (bytea), as ../attachments.ts keeps them in SQLite.
import type { AsyncStore } from '../async-store.js';
import type { AttachmentRow } from '../attachments.js';
import { row, rows, type Queryable } from './query.js';

type AttachmentMethods = Pick<AsyncStore, 'insertAttachment' | 'listAttachments' | 'getAttachment' | 'attachmentContent'>;

/** Every column but the bytes, which only attachmentContent reads. */
const COLUMNS = 'seq, id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, created';

export function attachmentMethods(db: Queryable): AttachmentMethods {
  return {
    insertAttachment: async (attachment, content) => (await row<AttachmentRow>(db, `INSERT INTO attachments (id, company_id, connection_id, data_type,
      record_id, file_name, content_type, size, sha256, content, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
    [attachment.id, attachment.company_id, attachment.connection_id, attachment.data_type, attachment.record_id, attachment.file_name,
      attachment.content_type, attachment.size, attachment.sha256, content, attachment.created]))!,
    listAttachments: (record) => rows<AttachmentRow>(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? ORDER BY seq`,
      [record.connectionId, record.dataType, record.recordId]),
    getAttachment: (record, id) => row<AttachmentRow>(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? AND id = ?`,
      [record.connectionId, record.dataType, record.recordId, id]),
    attachmentContent: async (id) => (await row<{ content: Buffer }>(db, 'SELECT content FROM attachments WHERE id = ?', [id]))?.content,
  };
}
