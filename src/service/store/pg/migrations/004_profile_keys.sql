-- The account's own profile (PUT /profile: redirect URL, logo, allowed URLs) as JSON, and
-- a name per API key (POST /apiKeys).
ALTER TABLE clients ADD COLUMN profile json;
ALTER TABLE api_keys ADD COLUMN name text COLLATE "C";
