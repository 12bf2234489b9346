// The results CSV: one line per row, never a token. During a run the journal is the
// record; the results file is (re)written from it, each row once, atomically, whenever a
// run ends — so a rerun after a kill never leaves a row twice or not at all.
import { stringify } from 'csv-stringify';
import { createReadStream, createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import type { JournalEvent } from './journal.js';
import { RESULT_COLUMNS, type RowResult } from './types.js';

export interface ResultsSink {
  write(result: RowResult): Promise<void>;
  /** Finishes the file and moves it into place. */
  close(): Promise<void>;
  /** Drops the half-written file. */
  abort(): void;
}

/** Streams results to a temp file beside `path`, renamed over it on close. */
export function openResults(path: string): ResultsSink {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = createWriteStream(temp, { mode: 0o644 });
  const csv = stringify({ header: true, columns: RESULT_COLUMNS as string[] });
  csv.pipe(file);
  return {
    async write(result) {
      if (!csv.write(RESULT_COLUMNS.map((c) => String(result[c] ?? '')))) await new Promise((r) => csv.once('drain', r));
    },
    async close() {
      csv.end();
      await finished(file);
      renameSync(temp, path);
    },
    abort() {
      // A write still in flight fails once the file is destroyed: nothing left to report.
      file.on('error', () => {});
      csv.destroy();
      file.destroy();
      rmSync(temp, { force: true });
    },
  };
}

/** Rewrites the results file from the journal's finished rows; returns how many. */
export async function resultsFromJournal(journalPath: string, resultsPath: string): Promise<number> {
  const sink = openResults(resultsPath);
  const written = new Set<number>();
  try {
    const lines = createInterface({ input: createReadStream(journalPath, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.includes('"type":"done"')) continue;
      let event: JournalEvent;
      try {
        event = JSON.parse(line) as JournalEvent;
      } catch {
        continue;
      }
      if (event.type !== 'done' || written.has(event.row)) continue;
      written.add(event.row);
      await sink.write(event.result);
    }
    await sink.close();
    return written.size;
  } catch (err) {
    sink.abort();
    throw err;
  }
}
