-- Attachment space per account, as the SQLite store's migration of the same name: each row
-- names its account (the company's, copied so that the counting needs no join, even while
-- a company's deletion cascades), and attachment_usage keeps each account's total, kept
-- right by a trigger on every insert and every delete, cascades included. Uploads lock
-- their account's usage row before they check it (attachments.ts), so those of one
-- account take turns and cannot pass the quota together. The bytes stay in `content`:
-- every instance on this database must read them.
ALTER TABLE attachments ADD COLUMN client_id text COLLATE "C";
UPDATE attachments a SET client_id = c.client_id FROM companies c WHERE c.id = a.company_id;
ALTER TABLE attachments ALTER COLUMN client_id SET NOT NULL;

CREATE TABLE attachment_usage (
  client_id text COLLATE "C" PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
  bytes     bigint NOT NULL
);
INSERT INTO attachment_usage (client_id, bytes) SELECT client_id, sum(size) FROM attachments GROUP BY client_id;

CREATE FUNCTION attachment_usage_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO attachment_usage (client_id, bytes) VALUES (NEW.client_id, NEW.size)
      ON CONFLICT (client_id) DO UPDATE SET bytes = attachment_usage.bytes + excluded.bytes;
    RETURN NEW;
  END IF;
  UPDATE attachment_usage SET bytes = bytes - OLD.size WHERE client_id = OLD.client_id;
  RETURN OLD;
END
$$;
CREATE TRIGGER attachment_counted AFTER INSERT OR DELETE ON attachments
  FOR EACH ROW EXECUTE FUNCTION attachment_usage_count();
