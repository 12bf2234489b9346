// A reader thread: its own read-only connection to the store, running page plans (WAL gives
// each read a consistent snapshot while the request thread and the sync worker write).
import { workerData } from 'node:worker_threads';
import { openReadOnly } from '../../lib/sqlite.js';
import type { Page, PagePlan } from '../store/paging.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { serveTasks } from './thread-tasks.js';

export interface ReaderOptions {
  dbFile: string;
}

const { dbFile } = workerData as ReaderOptions;
const store = createSqliteStore(openReadOnly(dbFile));

serveTasks<PagePlan, Page<unknown>>((plan) => store.runPage(plan), { close: () => store.close() });
