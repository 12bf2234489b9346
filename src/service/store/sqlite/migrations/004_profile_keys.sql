-- The account's own profile (PUT /profile: redirect URL, logo, allowed URLs) as JSON, and
-- a name per API key (POST /apiKeys).
ALTER TABLE clients ADD COLUMN profile TEXT;
ALTER TABLE api_keys ADD COLUMN name TEXT;
