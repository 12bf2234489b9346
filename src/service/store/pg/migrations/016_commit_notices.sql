-- PostgreSQL only: every process on the database hears at once that events or webhook
-- deliveries were committed, from whichever process wrote them (store/pg/notices.ts
-- LISTENs on one connection per process), instead of each one looking every few
-- milliseconds. A notice is sent when its transaction commits and not at all if it rolls
-- back. `ferry_events` carries the highest event seq of its statement; `ferry_deliveries`
-- carries nothing, so a transaction's deliveries are one notice however many statements
-- wrote them. A statement that wrote no row (an event no consumer wants) sends none.
CREATE FUNCTION notify_events_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ferry_events', max(seq)::text) FROM written HAVING count(*) > 0;
  RETURN NULL;
END
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION notify_events_written();

CREATE FUNCTION notify_deliveries_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM written) THEN
    PERFORM pg_notify('ferry_deliveries', '');
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION notify_deliveries_written();
