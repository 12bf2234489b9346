// What a scheduled-sync check reads: nothing of a data set requested within the shortest
// schedule (an hour), and each account's settings once however many of its companies are
// due. A migration's thousands of just-synced companies used to cost two reads each a minute.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createSealer } from '../../src/service/secrets.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { queuePull } from '../../src/service/sync/enqueue.js';
import { queueScheduledSyncs, resetScheduleCheck } from '../../src/service/sync/schedule.js';
import { tempDir } from '../helpers/service.js';
import { FakeClock } from '../helpers/sync.js';

const T0 = '2026-01-01T00:00:00Z';
const HOUR = 3_600;
const sealer = createSealer(randomBytes(32));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('reads no settings while every data set was requested within the hour, then each account\'s profile once and each due company\'s own', async () => {
  const dir = tempDir('ferry-schedule-');
  const store = sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')));
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = new FakeClock(Date.parse(T0));
  const client = await store.insertClient({ name: 'Many Ltd', plan: 'Paid', created: T0 });
  for (let i = 0; i < 5; i++) {
    const company = await store.insertCompany(client.id, { name: `Co ${i}`, tags: {} }, T0);
    const made = await store.insertConnection(company.id, 'gbol', 'xero', T0);
    await store.markLinked(made.id, null);
    await store.storeTokens(made.id, sealer.seal({ accessToken: 'a', refreshToken: 'r' }, made.id), T0);
    const pull = await queuePull(store, clock, (await store.getConnectionById(made.id))!, 'invoices');
    await store.updatePull(pull.id, { status: 'Complete', completed: T0, progress: 100 });
  }
  const reads: Array<string | undefined> = [];
  const counted: AsyncStore = { ...store, readSettings: (clientId, companyId) => (reads.push(companyId), store.readSettings(clientId, companyId)) };

  clock.advance(HOUR - 1);
  expect(await queueScheduledSyncs(counted, clock)).toBe(0);
  expect(reads).toEqual([]);

  // A day later every data set is due (the default schedule): five companies, one account.
  clock.advance(24 * HOUR);
  resetScheduleCheck(counted);
  expect(await queueScheduledSyncs(counted, clock)).toBe(5);
  expect(reads.filter((companyId) => companyId === undefined)).toHaveLength(1);
  expect(reads.filter((companyId) => companyId !== undefined)).toHaveLength(5);
});
