-- Each event is numbered by its own firing again, found by its key (011's way), not by
-- looking for the account's unnumbered events as 017 did. That look went through the
-- (client_id, account_seq) index's NULL entries, and every event leaves one there when it
-- is numbered: the version from before its number, dead until vacuum comes. An account of
-- thousands of migrated companies had a few hundred thousand of those, so each commit's
-- numbering walked them: at 10,000 companies its two statements took longer than storing
-- the records (docs/performance.md). A step of the counter per event costs a new version
-- of one row on one page.
--
-- What 011 says of order and deadlocks holds: an event is numbered at its transaction's
-- commit, under the counter's row lock, which is the commit's last lock.
CREATE OR REPLACE FUNCTION number_account_event() RETURNS trigger LANGUAGE plpgsql AS $$
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
