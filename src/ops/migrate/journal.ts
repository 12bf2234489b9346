// The migration's journal: one JSON line per finished step, written (to the OS, which
// keeps it whatever happens to this process) before the next step starts, so `kill -9`
// at any instant loses at most the step in flight —
// and each step is safe to repeat (the company is found by its ferryKey tag, the
// connection by the company's connections, an already Linked connection is not
// authorized again). Tokens are never written here.
import { closeSync, existsSync, openSync, readSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { RowResult } from './types.js';

export type JournalEvent =
  | { type: 'start'; input: string; fingerprint: string; at: string; shard?: string }
  | { type: 'company'; row: number; key: string; companyId: string }
  | { type: 'connection'; row: number; key: string; connectionId: string }
  | { type: 'authorized'; row: number; key: string }
  | { type: 'done'; row: number; key: string; result: RowResult };

/** What a rerun needs to know: rows finished, and the ids of rows halfway through. */
export interface JournalState {
  done: Set<number>;
  /** Rows whose last attempt failed: this run tries them again. */
  retry: Set<number>;
  /** Rows whose last result was migrated or skipped, with their keys: all --retry-failed leaves alone. */
  succeeded: Map<number, string>;
  partial: Map<number, { key: string; companyId?: string; connectionId?: string; authorized?: boolean }>;
  /** SHA-256 of the input the last run read: a changed file must not be resumed. */
  fingerprint?: string;
  runs: number;
}

export async function readJournal(path: string): Promise<JournalState> {
  const state: JournalState = { done: new Set(), retry: new Set(), succeeded: new Map(), partial: new Map(), runs: 0 };
  if (!existsSync(path)) return state;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let event: JournalEvent;
    try {
      event = JSON.parse(line) as JournalEvent;
    } catch {
      continue; // a line cut short by a kill: the step it recorded will simply run again
    }
    if (event.type === 'start') {
      state.runs += 1;
      state.fingerprint = event.fingerprint;
      continue;
    }
    if (event.type === 'done') {
      // A row that failed past validation is tried again by the next run (after the plan
      // was upgraded, the service came back…), resuming from the steps it had finished.
      if (event.result.status === 'failed') state.succeeded.delete(event.row);
      else state.succeeded.set(event.row, event.key);
      if (event.result.status === 'failed' && event.result.step !== 'validate') {
        state.done.delete(event.row);
        state.retry.add(event.row);
      } else {
        state.done.add(event.row);
        state.retry.delete(event.row);
        state.partial.delete(event.row);
      }
      continue;
    }
    const partial = state.partial.get(event.row) ?? { key: event.key };
    if (event.type === 'company') partial.companyId = event.companyId;
    if (event.type === 'connection') partial.connectionId = event.connectionId;
    if (event.type === 'authorized') partial.authorized = true;
    state.partial.set(event.row, partial);
  }
  return state;
}

export class JournalWriter {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a', 0o600);
  }

  /** Appends one event; once this returns, a killed process cannot lose it. */
  append(event: JournalEvent): void {
    writeSync(this.fd, `${JSON.stringify(event)}\n`);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** When the journal's run first began (its first line, a `start`), in epoch ms; undefined without a journal or a readable start. */
export function journalBegan(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(4096);
    const read = readSync(fd, head, 0, head.length, 0);
    const first = head.subarray(0, read).toString('utf8').split('\n', 1)[0] ?? '';
    const event = JSON.parse(first) as Partial<JournalEvent>;
    const at = event.type === 'start' && event.at ? Date.parse(event.at) : Number.NaN;
    return Number.isNaN(at) ? undefined : at;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

