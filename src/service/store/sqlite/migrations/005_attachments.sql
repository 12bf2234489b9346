-- Files attached to synced records, kept by the service itself: uploads are stored here
-- and read back from here. A company's or a connection's deletion takes its attachments
-- with it. `content` is at most MAX_ATTACHMENT_BYTES (src/platforms/limits.ts); lists
-- never read it.
CREATE TABLE attachments (
  seq           INTEGER PRIMARY KEY,
  id            TEXT NOT NULL UNIQUE,
  company_id    TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
  connection_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  data_type     TEXT NOT NULL,
  record_id     TEXT NOT NULL,
  file_name     TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  size          INTEGER NOT NULL,
  sha256        TEXT NOT NULL,
  content       BLOB NOT NULL,
  created       TEXT NOT NULL
);
CREATE INDEX attachments_record ON attachments(connection_id, data_type, record_id, seq);
-- Cascades from companies and connections look rows up by these.
CREATE INDEX attachments_company ON attachments(company_id);
