-- Attachment space per account. An account's files count against a quota (`ferry serve
-- --attachment-quota`), so each row names its account (the company's, copied so that the
-- counting needs no join, even while a company's deletion cascades) and attachment_usage
-- keeps each account's total, kept right by the triggers below on every insert and every
-- delete, cascades included. The bytes of a file now live in <data-dir>/attachments/<id>
-- (attachment-files.ts), so a deletion gives their space back to the file system at once:
-- `content` is left only to rows stored before, whose bytes the next start moves out.
-- SQLite cannot relax a NOT NULL column in place, hence the new table (its columns in
-- PostgreSQL's order, which adds client_id last). Numbered as PostgreSQL's migration is.
CREATE TABLE attachments_next (
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
  content       BLOB,
  created       TEXT NOT NULL,
  client_id     TEXT NOT NULL
);
INSERT INTO attachments_next (seq, id, company_id, connection_id, data_type, record_id, file_name, content_type, size, sha256, content, created, client_id)
  SELECT a.seq, a.id, a.company_id, a.connection_id, a.data_type, a.record_id, a.file_name, a.content_type, a.size, a.sha256, a.content, a.created, c.client_id
  FROM attachments a JOIN companies c ON c.id = a.company_id;
DROP TABLE attachments;
ALTER TABLE attachments_next RENAME TO attachments;
-- A record's files in order (a connection's cascade finds its rows by it too), and a company's cascade.
CREATE INDEX attachments_record ON attachments(connection_id, data_type, record_id, seq);
CREATE INDEX attachments_company ON attachments(company_id);

CREATE TABLE attachment_usage (
  client_id TEXT PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
  bytes     INTEGER NOT NULL
);
INSERT INTO attachment_usage (client_id, bytes) SELECT client_id, SUM(size) FROM attachments GROUP BY client_id;

CREATE TRIGGER attachment_counted AFTER INSERT ON attachments BEGIN
  INSERT INTO attachment_usage (client_id, bytes) VALUES (NEW.client_id, NEW.size)
    ON CONFLICT (client_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER attachment_uncounted AFTER DELETE ON attachments BEGIN
  UPDATE attachment_usage SET bytes = bytes - OLD.size WHERE client_id = OLD.client_id;
END;
