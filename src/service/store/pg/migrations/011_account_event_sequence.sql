-- Each account numbers its own events: `account_seq` is what a client reads (a list
-- entry's `sequence`, `lastSequence`, the stream's ids and Last-Event-ID), so those
-- numbers count the account's own events and say nothing of how busy other accounts are.
-- `seq` stays the order of all events, for the outbox and the event bus.
--
-- Events already recorded keep the number clients have seen (their `seq`), and every
-- account counts on from the newest event of the whole database at this migration: a
-- cursor handed out before it is below every number given after it, so it still resumes
-- exactly where it was.
ALTER TABLE events ADD COLUMN account_seq bigint;
UPDATE events SET account_seq = seq;
DROP INDEX events_client;
CREATE UNIQUE INDEX events_account ON events (client_id, account_seq);

-- The last number each account gave out.
CREATE TABLE event_counters (
  client_id text COLLATE "C" PRIMARY KEY,
  last_seq  bigint NOT NULL
);
INSERT INTO event_counters (client_id, last_seq) SELECT id, (SELECT coalesce(max(seq), 0) FROM events) FROM clients;

-- An event is numbered when its transaction commits (a deferred trigger), not when it is
-- written. So the numbers of one account become visible in order: the counter's row is
-- locked from the numbering to the commit, so a later number never commits before an
-- earlier one, and a reader that has passed a number has seen every number below it. And
-- as the commit is every transaction's last step, the counter is the last lock it takes:
-- a transaction waiting for it holds nothing that the one numbering will wait for, so
-- it cannot deadlock, whatever rows the two locked before (a transaction records events
-- of one account only, so it takes one counter). Until the commit the event's
-- account_seq is NULL, which only its own transaction can see.
CREATE FUNCTION number_account_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  INSERT INTO event_counters AS c (client_id, last_seq) VALUES (NEW.client_id, 1)
    ON CONFLICT (client_id) DO UPDATE SET last_seq = c.last_seq + 1
    RETURNING c.last_seq INTO n;
  UPDATE events SET account_seq = n WHERE seq = NEW.seq;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER events_number_in_account AFTER INSERT ON events
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION number_account_event();
