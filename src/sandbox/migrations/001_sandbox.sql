-- The sandbox platforms' own store. Generated records are never stored: they are a pure
-- function of the tenant's seed. Tokens are kept as SHA-256 hashes only. Times are Unix
-- milliseconds, so expiry checks compare integers.

CREATE TABLE apps (
  client_id   TEXT PRIMARY KEY,
  platform    TEXT NOT NULL,
  name        TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created     INTEGER NOT NULL
);

CREATE TABLE app_callbacks (
  client_id TEXT NOT NULL REFERENCES apps (client_id) ON DELETE CASCADE,
  url       TEXT NOT NULL,
  created   INTEGER NOT NULL,
  PRIMARY KEY (client_id, url)
);

CREATE TABLE tenants (
  id                  TEXT PRIMARY KEY,
  platform            TEXT NOT NULL,
  -- The organisation id the client holds (realmId, tenantId, ...); NULL where tokens are bound to one organisation.
  org_id              TEXT,
  name                TEXT NOT NULL,
  seed                INTEGER NOT NULL,
  invoices            INTEGER NOT NULL,
  -- JSON object of the other token field values the platform issued (extras and settings).
  fields              TEXT NOT NULL,
  -- Hash of the refresh token the client's old application still holds.
  legacy_refresh_hash TEXT,
  created             INTEGER NOT NULL
);
CREATE UNIQUE INDEX tenants_platform_org ON tenants (platform, org_id);

CREATE TABLE grants (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants (id),
  client_id      TEXT,
  created        INTEGER NOT NULL,
  revoked_at     INTEGER,
  revoked_reason TEXT
);
CREATE INDEX grants_tenant ON grants (tenant_id);

CREATE TABLE tokens (
  hash       TEXT PRIMARY KEY,
  grant_id   TEXT NOT NULL REFERENCES grants (id),
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at INTEGER,
  used_at    INTEGER,
  created    INTEGER NOT NULL
);
CREATE INDEX tokens_grant ON tokens (grant_id);

CREATE TABLE pushed_records (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  data_type TEXT NOT NULL,
  record_id TEXT NOT NULL,
  body      TEXT NOT NULL
);
CREATE INDEX pushed_records_page ON pushed_records (tenant_id, data_type, seq);
CREATE INDEX pushed_records_id ON pushed_records (tenant_id, data_type, record_id);

CREATE TABLE pushes (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  data_type   TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('Pending', 'Success', 'Failed')),
  payload     TEXT NOT NULL,
  requested   INTEGER NOT NULL,
  complete_at INTEGER NOT NULL,
  completed   INTEGER,
  record_seq  INTEGER REFERENCES pushed_records (seq),
  errors      TEXT
);
CREATE INDEX pushes_pending ON pushes (tenant_id, data_type, complete_at) WHERE status = 'Pending';

CREATE TABLE legacy_refreshes (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  at        INTEGER NOT NULL,
  outcome   TEXT NOT NULL
);
CREATE INDEX legacy_refreshes_tenant ON legacy_refreshes (tenant_id, at);
