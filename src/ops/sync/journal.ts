// The journal of a `ferry sync --wait` run: one JSON line for its start and one per company
// found complete, written (to the OS, which keeps it whatever happens to this process) as
// they happen, so a run stopped by its timeout, Ctrl-C or `kill -9` is picked up by the
// same command: the companies it saw complete are not asked about again, and the others
// are judged against the run's start (runs.ts). A run that reaches its end removes it.
import { closeSync, createReadStream, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';

export type SyncJournalEvent =
  | {
    type: 'start';
    /** When the run began, on the service's clock (ISO 8601). */
    at: string;
    /** Data sets synced after this (the service's clock) count as done when the run resumes. */
    since: string;
    /** The service and account the run talks to: a journal of another target is not this run's. */
    target: string;
    /** The one data type synced, or null for every one. */
    dataType: string | null;
  }
  | { type: 'complete'; companyId: string; name?: string; dataTypes: string[] };

export interface SyncJournalState {
  start?: Extract<SyncJournalEvent, { type: 'start' }>;
  complete: Map<string, { name?: string; dataTypes: string[] }>;
}

export async function readSyncJournal(path: string): Promise<SyncJournalState> {
  const state: SyncJournalState = { complete: new Map() };
  if (!existsSync(path)) return state;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let event: SyncJournalEvent;
    try {
      event = JSON.parse(line) as SyncJournalEvent;
    } catch {
      continue; // a line cut short by a kill: that company is simply asked about again
    }
    if (event.type === 'start') state.start = event;
    else if (event.type === 'complete') state.complete.set(event.companyId, { ...(event.name !== undefined ? { name: event.name } : {}), dataTypes: event.dataTypes });
  }
  return state;
}

export class SyncJournalWriter {
  private fd: number | undefined;

  /** `fresh`: a new run, which replaces whatever journal was there; else lines are added to it. */
  constructor(readonly path: string, fresh: boolean) {
    this.fd = openSync(path, fresh ? 'w' : 'a', 0o600);
  }

  /** Appends one event; once this returns, a killed process cannot lose it. */
  append(event: SyncJournalEvent): void {
    if (this.fd !== undefined) writeSync(this.fd, `${JSON.stringify(event)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** The run reached its end: there is nothing to resume. */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
  }
}
