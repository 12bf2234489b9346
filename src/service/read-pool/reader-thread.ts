// A reader thread: its own read-only connection to the store, running page plans (WAL gives
// each read a consistent snapshot while the request thread and the sync worker write).
import { parentPort, workerData } from 'node:worker_threads';
import { openReadOnly } from '../../lib/sqlite.js';
import type { Page, PagePlan } from '../store/paging.js';
import { createSqliteStore } from '../store/sqlite-store.js';

export interface ReaderOptions {
  dbFile: string;
}

export type ReaderRequest = { id: number; plan: PagePlan };
export type ReaderReply = { id: number; page: Page<unknown> } | { id: number; error: string };

const { dbFile } = workerData as ReaderOptions;
const store = createSqliteStore(openReadOnly(dbFile));
const port = parentPort!;

port.on('message', (request: ReaderRequest | 'close') => {
  if (request === 'close') {
    store.close();
    port.close();
    return;
  }
  try {
    port.postMessage({ id: request.id, page: store.runPage(request.plan) } satisfies ReaderReply);
  } catch (err) {
    port.postMessage({ id: request.id, error: (err as Error).message } satisfies ReaderReply);
  }
});
