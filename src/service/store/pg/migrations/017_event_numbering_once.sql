-- A transaction's events are numbered together: the first event's numbering (at commit,
-- 011) counts every unnumbered event of the account, moves the counter once by that many
-- and numbers them in seq order. The other events' own firings find their row numbered
-- and do nothing. A sync job ends its 23 pulls in one transaction: that was 23 steps of
-- the counter's row (each a new version of it) and 23 updates, each a statement of its own.
--
-- Only the transaction's own events can be unnumbered when it commits: another's are
-- invisible until it commits, and it numbers them before that. What 011 says of order and
-- deadlocks holds as it was: numbering is still the commit's last step, under the
-- counter's row lock.
CREATE OR REPLACE FUNCTION number_account_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  k bigint;
  last bigint;
BEGIN
  IF (SELECT account_seq FROM events WHERE seq = NEW.seq) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  SELECT count(*) INTO k FROM events WHERE client_id = NEW.client_id AND account_seq IS NULL;
  INSERT INTO event_counters AS c (client_id, last_seq) VALUES (NEW.client_id, k)
    ON CONFLICT (client_id) DO UPDATE SET last_seq = c.last_seq + k
    RETURNING c.last_seq INTO last;
  UPDATE events e SET account_seq = last - k + o.n
    FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM events
          WHERE client_id = NEW.client_id AND account_seq IS NULL) o
    WHERE e.seq = o.seq;
  RETURN NULL;
END
$$;
