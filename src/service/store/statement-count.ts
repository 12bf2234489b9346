// Statements and commits counted at the store's boundary, for the benches that report them
// per migrated row (bench/main-job.mjs). Off unless FERRY_STATEMENT_COUNTS names a
// directory: then each thread that opens a store (the request thread, the sync worker's, a
// `ferry worker`) counts what its connections send, and writes its totals to
// <dir>/<pid>-<thread>.json every second, when its store closes and when it exits. Off,
// nothing is wrapped or timed: the stores run exactly as they do without this module.
//
// A statement is one round trip on PostgreSQL (BEGIN and COMMIT included) and one
// statement run on SQLite (its BEGIN, COMMIT and SAVEPOINTs included). A commit is a
// COMMIT, or a statement that writes outside a transaction (its own commit).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';

export const STATEMENT_COUNTS_ENV = 'FERRY_STATEMENT_COUNTS';

/** A second: each flush is a file written and renamed, and at 200 ms the counting showed in the times the bench measures beside it. */
const FLUSH_EVERY_MS = 1000;
/** Statement texts are kept as their first characters, whitespace folded: enough to tell them apart. */
const TEXT_CHARS = 160;
/** Texts folded and kept; past this many (statements made up on the fly), the rest are folded each time. */
const MAX_FOLDED = 10_000;

export interface StatementTotals {
  pid: number;
  threadId: number;
  /** The process's main thread (the API of `ferry serve`, or `ferry worker`'s loop), or a thread of its own (the sync worker). */
  mainThread: boolean;
  statements: number;
  commits: number;
  /** Statements by their text's first characters. */
  texts: Record<string, number>;
}

export class StatementTally {
  readonly totals: StatementTotals = { pid: process.pid, threadId, mainThread: isMainThread, statements: 0, commits: 0, texts: {} };
  private flushed = -1;
  private readonly folded = new Map<string, string>();

  constructor(private readonly file?: string) {}

  count(sql: string, commit: boolean): void {
    this.totals.statements += 1;
    if (commit) this.totals.commits += 1;
    const text = this.textOf(sql);
    this.totals.texts[text] = (this.totals.texts[text] ?? 0) + 1;
  }

  /** The statement's text as kept, folded once per text: a sync runs the same few statements a million times, and folding each run showed in the time the bench measures. */
  private textOf(sql: string): string {
    let text = this.folded.get(sql);
    if (text === undefined) {
      text = sql.replace(/\s+/g, ' ').trim().slice(0, TEXT_CHARS);
      if (this.folded.size < MAX_FOLDED) this.folded.set(sql, text);
    }
    return text;
  }

  /**
   * Writes the totals whole (a reader never sees half a file), if they changed. A file that
   * cannot be written (its directory gone) is the bench's loss, never the service's end.
   */
  flush(): void {
    if (!this.file || this.flushed === this.totals.statements) return;
    const partial = `${this.file}.partial`;
    try {
      writeFileSync(partial, JSON.stringify(this.totals));
      renameSync(partial, this.file);
      this.flushed = this.totals.statements;
    } catch {
      // the next flush tries again
    }
  }
}

let tally: StatementTally | undefined;

/** This thread's tally when FERRY_STATEMENT_COUNTS is set (made on first use), or undefined: count nothing. */
export function statementTally(env: NodeJS.ProcessEnv = process.env): StatementTally | undefined {
  const dir = env[STATEMENT_COUNTS_ENV];
  if (!dir) return undefined;
  if (!tally) {
    mkdirSync(dir, { recursive: true });
    const made = new StatementTally(join(dir, `${process.pid}-${threadId}.json`));
    setInterval(() => made.flush(), FLUSH_EVERY_MS).unref();
    process.on('exit', () => made.flush());
    tally = made;
  }
  return tally;
}

/** The SQL of a statement that writes: its own commit when it runs outside a transaction. */
export const WRITES = /\b(INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+[\w."]+(\s+(AS\s+)?\w+)?\s+SET|COPY\s+[\w."]+)\b/i;
