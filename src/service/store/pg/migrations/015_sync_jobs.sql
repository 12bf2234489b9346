-- A company's sync is one job, claimed in the queue's order: the interactive lane first,
-- then the oldest pull across companies, as the SQLite store's migration of the same name.
ALTER TABLE pull_operations ADD COLUMN priority integer NOT NULL DEFAULT 0;
CREATE INDEX pull_operations_queue ON pull_operations(priority DESC, seq)
  WHERE status IN ('Queued', 'Fetching', 'Mapping');
CREATE INDEX events_company ON events (company_id, event_type, seq);
