// The migration's own errors: the input cannot be read as a CSV, cannot be migrated as a
// whole, or is not the input its journal was written for. Each command words them for its
// context (migrate tokens, the managed steps).

export class CsvFormatError extends Error {
  constructor(message: string, readonly line?: number, readonly hint = 'Check the quoting and the delimiter (--delimiter).') {
    super(message);
    this.name = 'CsvFormatError';
  }
}

/** The input itself cannot be migrated (no rows, a column named twice): nothing row by row helps. */
export class RowsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowsError';
  }
}

export class JournalMismatchError extends Error {
  constructor(journalPath: string) {
    super(`The input changed since ${journalPath} was written, so it cannot be resumed safely.`);
    this.name = 'JournalMismatchError';
  }
}
