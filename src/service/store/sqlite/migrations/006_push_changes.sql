-- A push operation creates a record, or updates or deletes the one it names; the change it
-- reports (Created, Modified, Deleted) follows from that, whether the platform answered at
-- once or settled the push later.
ALTER TABLE push_operations ADD COLUMN change_type TEXT NOT NULL DEFAULT 'Created';
ALTER TABLE push_operations ADD COLUMN record_id TEXT;
