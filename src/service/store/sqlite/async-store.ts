// The SQLite store behind the asynchronous contract (../async-store.ts): the synchronous
// store's methods (sqlite-store.ts), each answering a promise, and transactions that may
// await. A transaction hands its work a store bound to it (`tx`). Calls made while the
// work runs, on `tx` or on the outer store from anything the work calls (its async
// context), join the transaction; calls from anywhere else wait until it has committed,
// so no other work ever runs inside someone else's transaction.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Statement } from 'better-sqlite3';
import { settleFiles } from './attachment-files.js';
import type { Db } from './db.js';
import { isPlanBuilder, type AsyncStore } from '../async-store.js';
import { createSqliteStore } from './sqlite-store.js';
import type { Store } from '../store.js';

/**
 * The SQLite store behind the asynchronous contract. One connection serves everyone, so a
 * transaction is exclusive: while one is open (its work may await), calls from outside it
 * queue behind it, and transactions queue behind each other.
 */
export function sqliteAsyncStore(db: Db): AsyncStore {
  const store = createSqliteStore(db);
  /** Settles when the last transaction queued so far has ended. */
  let idle: Promise<void> = Promise.resolve();
  let open = 0;
  /** Set inside a transaction's work: its calls, and those of whatever it awaits, join it. */
  const within = new AsyncLocalStorage<object>();
  /** The open transaction's mark; a task the work started and left running does not join a later one. */
  let active: object | undefined;
  const joins = () => active !== undefined && within.getStore() === active;
  let statements: { begin: Statement; commit: Statement; rollback: Statement } | undefined;

  const view = (inside: boolean): AsyncStore => {
    const methods: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(store) as Array<[keyof Store, (...args: unknown[]) => unknown]>) {
      if (name === 'transaction' || name === 'close') continue;
      if (isPlanBuilder(name)) {
        methods[name] = fn;
        continue;
      }
      methods[name] = inside
        ? (...args: unknown[]) => Promise.resolve().then(() => fn(...args))
        : async (...args: unknown[]) => {
          if (!joins()) while (open > 0) await idle;
          return fn(...args);
        };
    }
    methods.transaction = inside
      // Nested: the work joins the transaction it is already in.
      ? <T>(work: (tx: AsyncStore) => Promise<T>) => work(tx)
      : async <T>(work: (tx: AsyncStore) => Promise<T>): Promise<T> => {
        if (joins()) return work(tx);
        const before = idle;
        let done!: () => void;
        idle = new Promise<void>((resolve) => (done = resolve));
        open += 1;
        try {
          await before;
          statements ??= { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
          statements.begin.run();
          const mark = {};
          active = mark;
          try {
            const result = await within.run(mark, () => work(tx));
            statements.commit.run();
            return result;
          } catch (err) {
            if (db.inTransaction) statements.rollback.run();
            throw err;
          }
        } finally {
          active = undefined;
          open -= 1;
          // Attachment files follow their rows, kept or removed (attachment-files.ts).
          settleFiles(db);
          done();
        }
      };
    methods.close = async () => {
      while (open > 0) await idle;
      store.close();
      // Until disabled, every later promise in the process carries this store's context: a
      // process that opens many stores in turn (tests, embedded runs) would slow with each.
      within.disable();
    };
    return methods as unknown as AsyncStore;
  };
  const tx = view(true);
  return view(false);
}
