-- Updates and deletes of records. Generated records are never stored, so a change to
-- one (or to a pushed one) is kept here by id and laid over the record when it is read.
-- A deleted record stays listed with metadata.isDeleted = true, as platforms report it,
-- so offsets of the generated pages never shift.
CREATE TABLE record_edits (
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  data_type TEXT NOT NULL,
  record_id TEXT NOT NULL,
  body      TEXT NOT NULL,
  PRIMARY KEY (tenant_id, data_type, record_id)
) WITHOUT ROWID;

-- What a queued push does: create a record, or update or delete the one it names.
ALTER TABLE pushes ADD COLUMN op TEXT NOT NULL DEFAULT 'Create' CHECK (op IN ('Create', 'Update', 'Delete'));
ALTER TABLE pushes ADD COLUMN record_id TEXT;
ALTER TABLE pushes ADD COLUMN force INTEGER NOT NULL DEFAULT 0;
-- The record as an update or delete left it (a create points at pushed_records instead).
ALTER TABLE pushes ADD COLUMN result TEXT;
