-- Syncs (pull operations), data set snapshots and their records, push operations and
-- sync settings.

-- One row per pull: the durable queue. A worker claims a row by setting lease_until;
-- a row whose lease ran out (its worker died) is claimed again and resumes at `cursor`.
CREATE TABLE pull_operations (
  seq                INTEGER PRIMARY KEY,
  id                 TEXT NOT NULL UNIQUE,
  company_id         TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
  connection_id      TEXT NOT NULL,
  data_type          TEXT NOT NULL,
  status             TEXT NOT NULL,
  status_description TEXT,
  error_message      TEXT,
  requested          TEXT NOT NULL,
  completed          TEXT,
  progress           INTEGER NOT NULL DEFAULT 0,
  generation         INTEGER NOT NULL,
  cursor             TEXT,
  fetched            INTEGER NOT NULL DEFAULT 0,
  attempts           INTEGER NOT NULL DEFAULT 0,
  not_before         TEXT,
  lease_until        TEXT
);
CREATE INDEX pull_operations_company ON pull_operations(company_id, seq);
CREATE INDEX pull_operations_open ON pull_operations(status, seq)
  WHERE status IN ('Queued', 'Fetching', 'Mapping');

-- Per company and data type: which generation of records readers see. A sync writes
-- generation N+1 beside N; completing it flips `visible_generation` in one transaction,
-- so the last complete snapshot stays readable during a resync.
CREATE TABLE datasets (
  company_id                TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
  data_type                 TEXT NOT NULL,
  visible_generation        INTEGER,
  next_generation           INTEGER NOT NULL DEFAULT 1,
  latest_sync_id            TEXT,
  latest_successful_sync_id TEXT,
  last_successful_sync      TEXT,
  last_requested            TEXT,
  PRIMARY KEY (company_id, data_type)
) WITHOUT ROWID;

-- Records of every data set; upserted by (company, type, generation, id), so a resync
-- or a resumed sync never duplicates. `seq` gives the stable default order.
CREATE TABLE records (
  seq           INTEGER PRIMARY KEY,
  company_id    TEXT NOT NULL,
  data_type     TEXT NOT NULL,
  generation    INTEGER NOT NULL,
  id            TEXT NOT NULL,
  connection_id TEXT NOT NULL,
  modified_date TEXT,
  data          TEXT NOT NULL,
  UNIQUE (company_id, data_type, generation, id)
);
-- Rows within equal keys sort by rowid, so this index serves the default order (seq).
CREATE INDEX records_order ON records(company_id, data_type, generation);
CREATE INDEX records_modified ON records(company_id, data_type, generation, modified_date);
-- The invoice filters people use most, so a filtered read is an index range, not a scan.
CREATE INDEX records_invoice_status ON records(company_id, generation, json_extract(data, '$.status') COLLATE NOCASE) WHERE data_type = 'invoices';
CREATE INDEX records_invoice_due ON records(company_id, generation, json_extract(data, '$.dueDate')) WHERE data_type = 'invoices';
CREATE INDEX records_invoice_issue ON records(company_id, generation, json_extract(data, '$.issueDate')) WHERE data_type = 'invoices';

-- Paths seen in each data type's records, with their JSON type: what `query` can resolve.
CREATE TABLE data_type_fields (
  data_type TEXT NOT NULL,
  path      TEXT NOT NULL,
  type      TEXT NOT NULL,
  PRIMARY KEY (data_type, path)
) WITHOUT ROWID;

CREATE TABLE push_operations (
  seq               INTEGER PRIMARY KEY,
  key               TEXT NOT NULL UNIQUE,
  company_id        TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
  connection_id     TEXT NOT NULL,
  data_type         TEXT NOT NULL,
  status            TEXT NOT NULL,
  status_code       INTEGER NOT NULL,
  requested         TEXT NOT NULL,
  completed         TEXT,
  timeout_minutes   INTEGER,
  error_message     TEXT,
  validation        TEXT NOT NULL DEFAULT '{"errors":[],"warnings":[]}',
  changes           TEXT,
  platform_push_id  TEXT
);
CREATE INDEX push_operations_company ON push_operations(company_id, seq);
CREATE INDEX push_operations_pending ON push_operations(status) WHERE status = 'Pending';

-- Sync settings: one row per account (company_id '') or company override.
CREATE TABLE sync_settings (
  client_id  TEXT NOT NULL,
  company_id TEXT NOT NULL DEFAULT '',
  settings   TEXT NOT NULL,
  PRIMARY KEY (client_id, company_id)
) WITHOUT ROWID;
