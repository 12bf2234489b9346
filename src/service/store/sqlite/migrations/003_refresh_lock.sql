-- A short lease on a connection while its tokens are refreshed. Refresh tokens are
-- single-use, and the request thread (pushes) and the sync worker thread both refresh:
-- the lease in the shared database makes them take turns.
ALTER TABLE connections ADD COLUMN refresh_lock_until INTEGER;
