-- Two kinds of index every synced record paid for and no read used (docs/performance.md,
-- "A tenth machine"):
--
-- The primary key of seq alone served only the deletion of old generations. The key is now
-- the data set generation's and seq, in the one index that already ordered each data set
-- by seq (records_order). seq is still unique: its identity gives it.
--
-- The invoices' dueDate and issueDate indexes hold the JSON text, but a query reads a date
-- field through an expression that parses it as an instant (query/json-fields.ts), which no
-- index can hold (the cast to timestamptz depends on the session's time zone), so no plan
-- ever used them; each cost two parses of the invoice's JSON and two index entries. SQLite
-- keeps its own: a bare json_extract there is what its date reads compare.
--
-- On a large table the key's index is built once, under the migration's lock.
ALTER TABLE records DROP CONSTRAINT records_pkey;
DROP INDEX records_order;
ALTER TABLE records ADD CONSTRAINT records_pkey PRIMARY KEY (company_id, data_type, generation, seq);
DROP INDEX records_invoice_due;
DROP INDEX records_invoice_issue;
