// The results CSV: one line per row, never a token. During a run the journal is the
// record; the results file is (re)written from it, each row once (its latest attempt), in
// row order, atomically, whenever a run ends — so a rerun after a kill never leaves a row
// twice or not at all.
import { stringify } from 'csv-stringify';
import { closeSync, createReadStream, createWriteStream, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { neutraliseFormula } from '../../lib/csv-cell.js';
import type { JournalEvent } from './journal.js';
import { RESULT_COLUMNS, type RowResult } from './types.js';

export interface ResultsSink {
  write(result: RowResult): Promise<void>;
  /** Finishes the file and moves it into place. */
  close(): Promise<void>;
  /** Drops the half-written file. */
  abort(): void;
}

/** Streams results to a temp file beside `path`, renamed over it on close; `csvEscape` neutralises formula-like cells. */
export function openResults(path: string, csvEscape = true): ResultsSink {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = createWriteStream(temp, { mode: 0o644 });
  const csv = stringify({ header: true, columns: RESULT_COLUMNS as string[] });
  csv.pipe(file);
  return {
    async write(result) {
      const cells = RESULT_COLUMNS.map((c) => String(result[c] ?? ''));
      if (!csv.write(csvEscape ? cells.map(neutraliseFormula) : cells)) await new Promise((r) => csv.once('drain', r));
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

/**
 * Rewrites the results file from the journal: each row once, its latest attempt, in row
 * order. Two passes keep memory at a few bytes per row: the first notes where each row's
 * last `done` line is, the second reads those lines back in row order.
 */
export async function resultsFromJournal(journalPath: string, resultsPath: string, csvEscape = true): Promise<number> {
  let offsets = new Float64Array(1024);
  let lengths = new Uint32Array(1024);
  let maxRow = 0;
  let position = 0;
  const lines = createInterface({ input: createReadStream(journalPath), crlfDelay: Infinity });
  for await (const line of lines) {
    const length = Buffer.byteLength(line);
    const start = position;
    position += length + 1;
    if (!line.includes('"type":"done"')) continue;
    let event: JournalEvent;
    try {
      event = JSON.parse(line) as JournalEvent;
    } catch {
      continue;
    }
    if (event.type !== 'done') continue;
    if (event.row >= offsets.length) {
      const size = Math.max(event.row + 1, offsets.length * 2);
      const grownOffsets = new Float64Array(size);
      grownOffsets.set(offsets);
      const grownLengths = new Uint32Array(size);
      grownLengths.set(lengths);
      offsets = grownOffsets;
      lengths = grownLengths;
    }
    offsets[event.row] = start;
    lengths[event.row] = length;
    maxRow = Math.max(maxRow, event.row);
  }

  const sink = openResults(resultsPath, csvEscape);
  const fd = openSync(journalPath, 'r');
  let written = 0;
  try {
    for (let row = 0; row <= maxRow; row += 1) {
      const length = lengths[row]!;
      if (length === 0) continue;
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, offsets[row]!);
      await sink.write((JSON.parse(buffer.toString('utf8')) as Extract<JournalEvent, { type: 'done' }>).result);
      written += 1;
    }
    await sink.close();
    return written;
  } catch (err) {
    sink.abort();
    throw err;
  } finally {
    closeSync(fd);
  }
}
