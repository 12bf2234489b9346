-- Each account numbers its own events: `account_seq` is what a client reads (a list
-- entry's `sequence`, `lastSequence`, the stream's ids and Last-Event-ID), so those
-- numbers count the account's own events and say nothing of how busy other accounts are.
-- `seq` stays the order of all events, for the outbox and the event bus.
--
-- Events already recorded keep the number clients have seen (their `seq`), and every
-- account counts on from the newest event of the whole database at this migration: a
-- cursor handed out before it is below every number given after it, so it still resumes
-- exactly where it was.
ALTER TABLE events ADD COLUMN account_seq INTEGER;
UPDATE events SET account_seq = seq;
DROP INDEX events_client;
CREATE UNIQUE INDEX events_account ON events (client_id, account_seq);

-- The last number each account gave out (store/events.ts takes the next one in the
-- writing transaction, which SQLite runs one at a time).
CREATE TABLE event_counters (
  client_id TEXT PRIMARY KEY,
  last_seq  INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO event_counters (client_id, last_seq) SELECT id, (SELECT coalesce(max(seq), 0) FROM events) FROM clients;
