// The ingest benches' baseline: plain INSERTs of a data set's rows ({ id, modifiedDate, data })
// into the records table of a store with the service's schema, one transaction a page, no
// upsert, no field bookkeeping, nothing else. Each answers the milliseconds of the writes alone.

/** SQLite (a better-sqlite3 handle from openDatabase): one prepared statement, run row by row. */
export function sqlitePlainInserts(db, { companyId, connectionId, dataType = 'invoices', generation = 1 }, pages) {
  const insert = db.prepare(`INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
                             VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const page = db.transaction((rows) => {
    for (const row of rows) insert.run(companyId, dataType, generation, row.id, connectionId, row.modifiedDate, row.data);
  });
  const started = performance.now();
  for (const rows of pages) page(rows);
  return performance.now() - started;
}

// A page in one statement, its columns as three arrays, as a bulk loader would write it.
const PLAIN_PG = `INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
  SELECT $1, $2, $3, r.id, $4, r.modified_date, r.data::json FROM unnest($5::text[], $6::text[], $7::text[]) AS r(id, modified_date, data)`;

/** PostgreSQL (a pg Pool): per page a client from the pool, BEGIN, one INSERT … SELECT FROM unnest, COMMIT. */
export async function postgresPlainInserts(pool, { companyId, connectionId, dataType = 'invoices', generation = 1 }, pages) {
  const started = performance.now();
  for (const rows of pages) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(PLAIN_PG, [companyId, dataType, generation, connectionId, rows.map((r) => r.id), rows.map((r) => r.modifiedDate ?? null), rows.map((r) => r.data)]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }
  return performance.now() - started;
}

/** Rows in pages of `size`. */
export function inPages(rows, size) {
  const pages = [];
  for (let from = 0; from < rows.length; from += size) pages.push(rows.slice(from, from + size));
  return pages;
}
