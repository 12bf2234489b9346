-- Events: what happened to an account's companies, connections, syncs and pushes, written
-- in the same transaction as the change that causes it. `seq` orders them for streams
-- (Last-Event-ID); `body` is the event exactly as it is delivered.
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  client_id  TEXT NOT NULL,
  company_id TEXT,
  event_type TEXT NOT NULL,
  generated  TEXT NOT NULL,
  body       TEXT NOT NULL
);
CREATE INDEX events_client ON events (client_id, seq);

-- Webhook consumers: where an account wants its events sent. The signing secret is sealed
-- with the service's key; it is shown once, when the consumer is created.
CREATE TABLE webhook_consumers (
  id              TEXT PRIMARY KEY,
  client_id       TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  event_types     TEXT NOT NULL,
  company_tags    TEXT,
  disabled        INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  secret          BLOB NOT NULL,
  created         TEXT NOT NULL
);
CREATE INDEX webhook_consumers_client ON webhook_consumers (client_id);

-- The outbox: one delivery per event and consumer, written with the event. A delivery is
-- Pending until the receiver answers 2xx (Delivered) or the service gives up (Failed).
-- `company_id` is its ordering lane: a company's deliveries to a consumer go one at a time.
CREATE TABLE webhook_deliveries (
  seq           INTEGER PRIMARY KEY,
  id            TEXT NOT NULL UNIQUE,
  consumer_id   TEXT NOT NULL REFERENCES webhook_consumers (id) ON DELETE CASCADE,
  event_seq     INTEGER NOT NULL REFERENCES events (seq),
  company_id    TEXT,
  status        TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  next_attempt  TEXT NOT NULL,
  first_failure TEXT,
  lease_until   TEXT,
  created       TEXT NOT NULL,
  completed     TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_consumer ON webhook_deliveries (consumer_id, seq);
CREATE INDEX webhook_deliveries_lane ON webhook_deliveries (consumer_id, company_id, seq) WHERE status = 'Pending';

-- Every attempt of a delivery, for the delivery log.
CREATE TABLE webhook_attempts (
  delivery_seq INTEGER NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
  attempt      INTEGER NOT NULL,
  at           TEXT NOT NULL,
  status_code  INTEGER,
  error        TEXT,
  latency_ms   INTEGER NOT NULL,
  PRIMARY KEY (delivery_seq, attempt)
) WITHOUT ROWID;
