-- A company's sync is one job (sync/job.ts): a worker claims every claimable pull of the
-- company at the queue's head under one lease. The head is the interactive lane first
-- (priority 1: a sync asked for one company, sync/lanes.ts), then the oldest pull across
-- companies, so the first company of a migration is not the last to sync.
ALTER TABLE pull_operations ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pull_operations_queue ON pull_operations(priority DESC, seq)
  WHERE status IN ('Queued', 'Fetching', 'Mapping');
-- The company's latest event of a type (lastCompanyEvent, companyEventsAfter).
CREATE INDEX events_company ON events (company_id, event_type, seq);
