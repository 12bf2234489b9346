// Attachments: files uploaded against a synced record of a connection. The rows are here,
// the bytes in a file each (attachment-files.ts). An account's files count against its
// quota, and a record takes a bounded number of them: both checked with the insert, in
// the transaction that writes it (SQLite runs one at a time, so two uploads cannot pass a
// limit together).
import { attachmentFile, noteDeleted, placeFile, settleFiles } from './attachment-files.js';
import type { Db } from './db.js';
import { prepared } from './statements.js';
import type { AttachmentRow, AttachmentInput, RecordRef, AttachmentLimits, AttachmentInsert, AttachmentBody } from '../attachments.js';

const COLUMNS = 'seq, id, client_id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, created';

export function attachmentBytesUsed(db: Db, clientId: string): number {
  return (prepared(db, 'SELECT bytes FROM attachment_usage WHERE client_id = ?').pluck().get(clientId) as number | undefined) ?? 0;
}

/**
 * Stores an attachment, its bytes taken from the staged file (moved into place), unless
 * the account's quota or the record's file limit would be passed; then the staged file is
 * left where it was. Call inside a transaction, or the checks and the insert are not one.
 */
export function insertAttachment(db: Db, row: AttachmentInput, staged: string, limits: AttachmentLimits): AttachmentInsert {
  const usedBytes = attachmentBytesUsed(db, row.client_id);
  if (usedBytes + row.size > limits.quotaBytes) return { refused: 'quota', usedBytes };
  const files = prepared(db, 'SELECT count(*) FROM attachments WHERE connection_id = ? AND data_type = ? AND record_id = ?').pluck()
    .get(row.connection_id, row.data_type, row.record_id) as number;
  if (files >= limits.perRecord) return { refused: 'record', files };
  try {
    // The row first, so a taken id never reaches the file system; a savepoint, so a file that cannot be placed takes its row back.
    return {
      row: db.transaction(() => {
        // The insert's trigger adds the bytes to the account's usage (012_attachment_space.sql).
        const inserted = prepared(db, `INSERT INTO attachments (id, client_id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, created)
          VALUES (@id, @client_id, @company_id, @connection_id, @data_type, @record_id, @file_name, @content_type, @size, @sha256, @created)
          RETURNING ${COLUMNS}`).get(row) as AttachmentRow;
        placeFile(db, row.id, staged);
        return inserted;
      })(),
    };
  } finally {
    settleFiles(db);
  }
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

export function attachmentBody(db: Db, id: string): AttachmentBody | undefined {
  const found = prepared(db, 'SELECT 1 FROM attachments WHERE id = ?').pluck().get(id);
  return found === undefined ? undefined : { file: attachmentFile(db, id) };
}

/** Deletes one of a record's attachments (its file goes once the deletion commits); false when there was none. */
export function deleteAttachment(db: Db, record: RecordRef, id: string): boolean {
  const found = getAttachment(db, record, id);
  if (!found) return false;
  noteDeleted(db, [id]);
  prepared(db, 'DELETE FROM attachments WHERE id = ?').run(id);
  settleFiles(db);
  return true;
}
