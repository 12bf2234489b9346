// Attachments: files uploaded against a synced record of a connection, with their bytes.
import type { Db } from './db.js';
import { prepared } from './statements.js';

/** An attachment's metadata; the bytes are read on their own (attachmentContent). */
export interface AttachmentRow {
  seq: number;
  id: string;
  company_id: string;
  connection_id: string;
  data_type: string;
  record_id: string;
  file_name: string;
  content_type: string;
  size: number;
  sha256: string;
  created: string;
}

export type AttachmentInput = Omit<AttachmentRow, 'seq'>;

/** Which record's attachments: a record id is unique within its connection's data type. */
export interface RecordRef {
  connectionId: string;
  dataType: string;
  recordId: string;
}

const COLUMNS = 'seq, id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, created';

export function insertAttachment(db: Db, row: AttachmentInput, content: Buffer): AttachmentRow {
  prepared(db, `INSERT INTO attachments (id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, content, created)
                VALUES (@id, @company_id, @connection_id, @data_type, @record_id, @file_name, @content_type, @size, @sha256, @content, @created)`)
    .run({ ...row, content });
  return prepared(db, `SELECT ${COLUMNS} FROM attachments WHERE id = ?`).get(row.id) as AttachmentRow;
}

/** A record's attachments, oldest first. */
export function listAttachments(db: Db, record: RecordRef): AttachmentRow[] {
  return prepared(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? ORDER BY seq`)
    .all(record.connectionId, record.dataType, record.recordId) as AttachmentRow[];
}

export function getAttachment(db: Db, record: RecordRef, id: string): AttachmentRow | undefined {
  return prepared(db, `SELECT ${COLUMNS} FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ? AND id = ?`)
    .get(record.connectionId, record.dataType, record.recordId, id) as AttachmentRow | undefined;
}

export function attachmentContent(db: Db, id: string): Buffer | undefined {
  return prepared(db, 'SELECT content FROM attachments WHERE id = ?').pluck().get(id) as Buffer | undefined;
}
