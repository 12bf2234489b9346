-- PostgreSQL only (on SQLite the key lives beside the database in one data dir): every
-- process on one database must seal tokens with the same key. The first to start records a
-- check value of its key (an HMAC of a fixed text under it: the key cannot be got back from
-- it); any process with another key is refused at start instead of sealing tokens that the
-- others cannot open.
CREATE TABLE key_check (
  id    integer PRIMARY KEY CHECK (id = 1),
  value text NOT NULL
);
