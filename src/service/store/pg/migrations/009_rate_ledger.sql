-- PostgreSQL only (SQLite runs in one process and keeps its buckets in memory): the shared
-- rate limit of API instances on one database (service/shared-rate-limit.ts, pg/rate-ledger.ts).
-- One token bucket per key ('key:<key id>' or 'ip:<address>'): `tokens` as of `at` (ms on
-- the instances' clocks), below 0 while the instances pay back what they admitted over it.
CREATE TABLE rate_ledger (
  key    text COLLATE "C" PRIMARY KEY,
  tokens double precision NOT NULL,
  at     bigint NOT NULL
);

-- The instances that settle with the ledger and when each last did (ms): the recent ones
-- share each bucket between them.
CREATE TABLE rate_instances (
  instance text COLLATE "C" PRIMARY KEY,
  seen     bigint NOT NULL
);
