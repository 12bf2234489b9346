-- A transaction's events of one account are numbered together again, as 017 meant, but
-- found by their keys one after another from the transaction's first event, not by the
-- (client_id, account_seq) index's NULL entries that 018 moved away from.
--
-- Why: a sync job ends its data types in one transaction, 23 events or more. 018 stepped
-- the account's counter once an event: each step a new version of the one row every
-- writer of the account updates, found by walking that row's chain of versions. In the
-- sync of 1,000 companies those steps took about 5 ms a job, on the worker's path.
--
-- How: the first of the transaction's events to fire (at commit, 011) is its first
-- written, so its lowest seq. An event of the account that is visible and unnumbered is
-- the transaction's own: another transaction's are invisible until it commits, and it
-- numbers them before that. So the events at seq + 1, seq + 2, ... are looked up by key
-- while they are the transaction's own, and this event and those take the next numbers
-- in seq order with one step of the counter; their own firings then find them numbered
-- and do nothing. An event followed by another transaction's (an API request's one event,
-- or events written between others') is numbered alone or with the run that follows it.
--
-- Each look is a lookup of the primary key, whatever the table's statistics say: a range
-- read of seq was planned through the (client_id, account_seq) index on a table never
-- analysed, 1,000 buffers a commit at 3,000 companies. "Unnumbered" is spelled
-- coalesce(account_seq, 0) = 0 (numbers start at 1) so that this index can never answer
-- it: its NULL entries include every numbered event's old version until vacuum comes, the
-- walk 018 moved away from. The looks come before the counter
-- is locked, which is then held only for the step and the numbering (every writer of the
-- account waits on that lock); an event numbered alone is updated by its key, as in 018,
-- so an API request holds the lock no longer than it did.
--
-- What 011 says of order and deadlocks holds: numbering is still the commit's last step,
-- under the counter's row lock, and each account's events take their numbers in seq order.
CREATE OR REPLACE FUNCTION number_account_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  k bigint := 1;
  last bigint;
BEGIN
  IF (SELECT account_seq FROM events WHERE seq = NEW.seq) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  WHILE EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq + k AND client_id = NEW.client_id AND coalesce(account_seq, 0) = 0) LOOP
    k := k + 1;
  END LOOP;
  INSERT INTO event_counters AS c (client_id, last_seq) VALUES (NEW.client_id, k)
    ON CONFLICT (client_id) DO UPDATE SET last_seq = c.last_seq + k
    RETURNING c.last_seq INTO last;
  IF k = 1 THEN
    UPDATE events SET account_seq = last WHERE seq = NEW.seq;
  ELSE
    UPDATE events SET account_seq = last - k + 1 + (seq - NEW.seq)
      WHERE seq = ANY (ARRAY(SELECT generate_series(NEW.seq, NEW.seq + k - 1)));
  END IF;
  RETURN NULL;
END
$$;
