-- A webhook consumer may be bound to one company of its account: the request body the
-- public API documented until late 2024 named it `companyId`, and a consumer made without
-- it would receive every company's events. A consumer made through the legacy rules API
-- (/rules) keeps the rule type it was made with, which that API shows back.
ALTER TABLE webhook_consumers ADD COLUMN company_id TEXT;
ALTER TABLE webhook_consumers ADD COLUMN rule_type TEXT;
