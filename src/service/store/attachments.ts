// Attachments as both stores keep them: the row, the record it belongs to, the limits an
// insert is held to and what it answers (SQL in sqlite/attachments.ts and pg/attachments.ts).

/** An attachment's metadata; the bytes are read on their own (attachmentBody). */
export interface AttachmentRow {
  seq: number;
  id: string;
  /** The account whose quota the file counts against: its company's. */
  client_id: string;
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

/** What an insert may not pass. */
export interface AttachmentLimits {
  /** Bytes of attachments per account. */
  quotaBytes: number;
  /** Files per record. */
  perRecord: number;
}

/** The row stored, or which limit refused it and how far along that limit was. */
export type AttachmentInsert =
  | { row: AttachmentRow }
  | { refused: 'quota'; usedBytes: number }
  | { refused: 'record'; files: number };

/** Where an attachment's bytes are: a file (SQLite), or read from the row (PostgreSQL). */
export type AttachmentBody = { file: string } | { bytes: Buffer };
