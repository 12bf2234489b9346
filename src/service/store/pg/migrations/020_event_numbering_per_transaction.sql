-- A transaction's events of one account are numbered together again, as 017 meant, but
-- found by the primary key from the transaction's first event of the account, not by the
-- (client_id, account_seq) index's NULL entries that 018 moved away from.
--
-- Why: a sync job ends its data types in one transaction, 23 events or more. 018 stepped
-- the account's counter once an event: each step a new version of the one row every
-- writer of the account updates, found by walking that row's chain of versions. In the
-- sync of 1,000 companies those steps took about 5 ms a job, on the worker's path.
--
-- How: the first of the transaction's events to fire (at commit, 011) is its first
-- written, so its lowest seq. When the event right after it (seq + 1) is visible and
-- unnumbered, it is the transaction's own: another transaction's events are invisible
-- until it commits, and it numbers them before that. Then the account's unnumbered events
-- from this seq on are all the transaction's own, and they take the next numbers in seq
-- order with one step of the counter; the other events' firings find their row numbered
-- and do nothing. Otherwise (an API request's one event, or events written between other
-- transactions' ones) the event is numbered alone, as 018 did: the range would hold the
-- other transactions' events too, and reading them costs more than it saves.
--
-- The range is read with a plan made for the value at hand (EXECUTE), so it is a short
-- range of the primary key whatever the statistics say of seq; and it is read before the
-- counter is locked, which is then held only for the step and the numbering of rows
-- already found (every writer of the account waits on that lock).
--
-- What 011 says of order and deadlocks holds: numbering is still the commit's last step,
-- under the counter's row lock, and each account's events take their numbers in seq order.
CREATE OR REPLACE FUNCTION number_account_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  mine bigint[] := ARRAY[NEW.seq];
  last bigint;
BEGIN
  IF (SELECT account_seq FROM events WHERE seq = NEW.seq) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq + 1 AND account_seq IS NULL) THEN
    EXECUTE 'SELECT array_agg(seq ORDER BY seq) FROM events WHERE seq >= $1 AND client_id = $2 AND account_seq IS NULL'
      INTO mine USING NEW.seq, NEW.client_id;
  END IF;
  INSERT INTO event_counters AS c (client_id, last_seq) VALUES (NEW.client_id, cardinality(mine))
    ON CONFLICT (client_id) DO UPDATE SET last_seq = c.last_seq + cardinality(mine)
    RETURNING c.last_seq INTO last;
  UPDATE events e SET account_seq = last - cardinality(mine) + o.n
    FROM unnest(mine) WITH ORDINALITY AS o(seq, n) WHERE e.seq = o.seq;
  RETURN NULL;
END
$$;
