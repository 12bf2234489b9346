// Counting what a SQLite connection runs (statement-count.ts), installed only when the
// count is on: every statement the connection prepares counts each time it runs, and a
// better-sqlite3 transaction counts its BEGIN and COMMIT (or SAVEPOINT and RELEASE when
// nested), so the figures read like PostgreSQL's, where each of those is a round trip.
import type { Statement, Transaction } from 'better-sqlite3';
import { WRITES, type StatementTally } from '../statement-count.js';
import type { Db } from '../../../lib/sqlite.js';

const RUNS = ['run', 'get', 'all', 'iterate'] as const;
const VARIANTS = ['default', 'deferred', 'immediate', 'exclusive'] as const;

function countStatement(db: Db, statement: Statement, tally: StatementTally): void {
  const word = /^\s*(\w+)/.exec(statement.source)?.[1]?.toUpperCase();
  const writes = !statement.readonly && WRITES.test(statement.source);
  for (const name of RUNS) {
    const runIt = statement[name].bind(statement) as (...args: unknown[]) => unknown;
    (statement as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      tally.count(statement.source, word === 'COMMIT' || (writes && !db.inTransaction));
      return runIt(...args);
    };
  }
}

function countTransaction(db: Db, tally: StatementTally, run: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  return (...args: unknown[]) => {
    const outer = !db.inTransaction;
    tally.count(outer ? 'BEGIN' : 'SAVEPOINT', false);
    let ended = false;
    try {
      const result = run(...args);
      ended = true;
      return result;
    } finally {
      tally.count(outer ? (ended ? 'COMMIT' : 'ROLLBACK') : (ended ? 'RELEASE' : 'ROLLBACK TO'), outer && ended);
    }
  };
}

export function countDbStatements(db: Db, tally: StatementTally): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    countStatement(db, statement, tally);
    return statement;
  }) as Db['prepare'];
  const transaction = db.transaction.bind(db);
  db.transaction = ((work: (...args: unknown[]) => unknown) => {
    const made = transaction(work);
    const counted = countTransaction(db, tally, made) as Transaction<(...args: unknown[]) => unknown>;
    for (const variant of VARIANTS) (counted as unknown as Record<string, unknown>)[variant] = countTransaction(db, tally, made[variant]);
    return counted;
  }) as Db['transaction'];
  const exec = db.exec.bind(db);
  db.exec = ((source: string) => {
    tally.count(source, !db.inTransaction && WRITES.test(source));
    return exec(source);
  }) as Db['exec'];
  const pragma = db.pragma.bind(db) as (...args: unknown[]) => unknown;
  db.pragma = ((...args: unknown[]) => {
    tally.count(`PRAGMA ${String(args[0])}`, false);
    return pragma(...args);
  }) as Db['pragma'];
  const close = db.close.bind(db);
  db.close = (() => {
    const closed = close();
    tally.flush();
    return closed;
  }) as Db['close'];
}
