-- What an account asks of a platform beyond the standard data types: supplemental fields
-- read into a data type's records, and custom data types with their own source and
-- mapping. Each is one JSON document per account, platform and data type (or identifier).
CREATE TABLE supplemental_configs (
  client_id    TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  platform_key TEXT NOT NULL,
  data_type    TEXT NOT NULL,
  config       TEXT NOT NULL,
  PRIMARY KEY (client_id, platform_key, data_type)
) WITHOUT ROWID;

CREATE TABLE custom_data_types (
  client_id    TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  platform_key TEXT NOT NULL,
  identifier   TEXT NOT NULL,
  config       TEXT NOT NULL,
  PRIMARY KEY (client_id, platform_key, identifier)
) WITHOUT ROWID;

-- The checks a pull ran over the records it read (GET /companies/{id}/sync/{datasetId}/validation).
ALTER TABLE pull_operations ADD COLUMN validation TEXT;
