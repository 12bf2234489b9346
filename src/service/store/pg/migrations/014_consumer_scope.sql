-- A webhook consumer bound to one company (the `companyId` of the body the public API
-- documented until late 2024), and the rule type of a consumer made through the legacy
-- rules API (/rules), as the SQLite store's migration of the same name.
ALTER TABLE webhook_consumers ADD COLUMN company_id text COLLATE "C";
ALTER TABLE webhook_consumers ADD COLUMN rule_type text COLLATE "C";
