-- Accounts, API keys, companies, connections and their sealed tokens.
-- Every table keeps an integer `seq` so the default list order is creation order and stable.

CREATE TABLE clients (
  seq      INTEGER PRIMARY KEY,
  id       TEXT NOT NULL UNIQUE,
  name     TEXT NOT NULL,
  plan     TEXT NOT NULL CHECK (plan IN ('Free', 'Paid')),
  created  TEXT NOT NULL,
  is_admin INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE api_keys (
  seq       INTEGER PRIMARY KEY,
  id        TEXT NOT NULL UNIQUE,
  client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  key_hash  TEXT NOT NULL UNIQUE,
  created   TEXT NOT NULL,
  revoked   TEXT
);
CREATE INDEX api_keys_client ON api_keys(client_id, seq);

CREATE TABLE companies (
  seq                  INTEGER PRIMARY KEY,
  id                   TEXT NOT NULL UNIQUE,
  client_id            TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  name                 TEXT NOT NULL,
  description          TEXT,
  created              TEXT NOT NULL,
  created_by_user_name TEXT,
  last_sync            TEXT,
  tags                 TEXT NOT NULL DEFAULT '{}',
  products             TEXT NOT NULL DEFAULT '[]',
  ref_subsidiaries     TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX companies_client ON companies(client_id, seq);
CREATE INDEX companies_client_name ON companies(client_id, name COLLATE NOCASE);
-- Bulk migration finds companies by this tag; keep that lookup indexed.
CREATE INDEX companies_client_ferry_key ON companies(client_id, json_extract(tags, '$.ferryKey'));

CREATE TABLE connections (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  company_id      TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
  integration_key TEXT NOT NULL,
  source_id       TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('PendingAuth', 'Linked', 'Unlinked', 'Deauthorized')),
  created         TEXT NOT NULL,
  last_sync       TEXT,
  errors          TEXT,
  connection_info TEXT
);
CREATE INDEX connections_company ON connections(company_id, seq);

-- Tokens are sealed with AES-256-GCM before they reach this table.
CREATE TABLE connection_tokens (
  connection_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
  sealed        BLOB NOT NULL,
  updated       TEXT NOT NULL
);
