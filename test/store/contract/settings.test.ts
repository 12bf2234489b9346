// Sync settings and data configurations answer on PostgreSQL as on SQLite; the data
// version keys the caches in both, so its contract is what the caches rely on rather than
// equal text: it holds while only reads happen, and moves when any process commits a write.
import { expect, it } from 'vitest';
import type { SyncSetting } from '../../../src/service/store/sync-settings.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { settingMethods } from '../../../src/service/store/pg/settings.js';
import { versionMethods } from '../../../src/service/store/pg/version.js';
import { describePostgres } from '../../helpers/postgres.js';
import { outcome, relabel, secondPool } from './owners.js';
import { freshPostgres, freshSqlite, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...clientMethods(db), ...settingMethods(db), ...versionMethods(db) });
type Store = ReturnType<typeof methods>;

const ACCOUNT: SyncSetting[] = [
  { dataType: 'invoices', fetchOnFirstLink: true, syncSchedule: 24, syncOrder: 0, syncFromUtc: '2020-01-01T00:00:00Z', isLocked: false },
  { dataType: 'bills', fetchOnFirstLink: false, syncSchedule: 0, syncOrder: 1, monthsToSync: 12, syncFromWindow: 3 },
];
const OVERRIDE: SyncSetting[] = [{ dataType: 'invoices', fetchOnFirstLink: false, syncSchedule: 1, syncOrder: 5, isLocked: true }];

/** A read of every kind this group and the client group serve. */
async function reads(store: Store, clientId: string): Promise<void> {
  await store.getClient(clientId);
  await store.listClients({ page: 1, pageSize: 10, query: 'name~o', orderBy: '-created' });
  await store.readSettings(clientId);
  await store.readDataConfig('custom', clientId, 'gbol', 'x');
}

describePostgres('settings and data version store contract', () => {
  it('reads and writes sync settings per account and per company', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const answers = {
        none: await store.readSettings('c1'),
        noneCompany: await store.readSettings('c1', 'co1'),
        account: await (async () => {
          await store.writeSettings('c1', '', ACCOUNT);
          return [await store.readSettings('c1'), await store.readSettings('c1', ''), await store.readSettings('c1', 'co1')];
        })(),
        override: await (async () => {
          await store.writeSettings('c1', 'co1', OVERRIDE);
          return [await store.readSettings('c1'), await store.readSettings('c1', 'co1'), await store.readSettings('c2', 'co1')];
        })(),
        replaced: await (async () => {
          await store.writeSettings('c1', '', []);
          return [await store.readSettings('c1'), await store.readSettings('c1', 'co1')];
        })(),
      };
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.account[0]).toEqual(ACCOUNT);
    expect(sqlite.replaced).toEqual([[], OVERRIDE]);
  });

  it('reads and writes supplemental and custom data configurations', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z' })).id;
      const names = new Map([[client, '<client>']]);
      const supplemental = { enabled: true, fields: [{ name: 'ẞ', path: 'a.b' }], nested: { z: null, a: 1.5 } };
      await store.writeDataConfig('supplemental', client, 'gbol', 'invoices', supplemental);
      await store.writeDataConfig('custom', client, 'gbol', 'invoices', ['a custom one']);
      await store.writeDataConfig('custom', client, 'gbol', 'widgets', 'text');
      const answers = {
        supplemental: await store.readDataConfig('supplemental', client, 'gbol', 'invoices'),
        custom: await store.readDataConfig('custom', client, 'gbol', 'invoices'),
        scalar: await store.readDataConfig('custom', client, 'gbol', 'widgets'),
        otherPlatform: await store.readDataConfig('supplemental', client, 'qhyg', 'invoices'),
        otherName: await store.readDataConfig('supplemental', client, 'gbol', 'bills'),
        otherClient: await store.readDataConfig('supplemental', 'missing', 'gbol', 'invoices'),
        overwritten: await (async () => {
          await store.writeDataConfig('supplemental', client, 'gbol', 'invoices', { enabled: false });
          return [await store.readDataConfig('supplemental', client, 'gbol', 'invoices'), await store.readDataConfig('custom', client, 'gbol', 'invoices')];
        })(),
        noClient: await outcome(() => store.writeDataConfig('custom', 'missing', 'gbol', 'x', {})),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.overwritten).toEqual([{ enabled: false }, ['a custom one']]);
    expect(sqlite.otherName).toBeUndefined();
    expect(sqlite.noClient).toBe('rejected');
  });

  it('keeps the data version while only reads happen, on both stores', async () => {
    const store = freshSqlite();
    const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z' })).id;
    const before = await store.dataVersion();
    await reads(store, client);
    expect(await store.dataVersion()).toBe(before);
    await store.writeSettings(client, '', ACCOUNT);
    expect(await store.dataVersion()).not.toBe(before);

    // PostgreSQL's version moves with any commit in the cluster (version.ts), and other
    // test files write to it at the same time: reads must keep it in some quiet moment
    // before the deadline. Were reads to write, no moment would be quiet.
    const pool = await freshPostgres();
    try {
      const pg = methods(pool);
      const id = (await pg.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z' })).id;
      const deadline = Date.now() + 20_000;
      let held = false;
      while (!held && Date.now() < deadline) {
        const version = await pg.dataVersion();
        await reads(pg, id);
        held = (await pg.dataVersion()) === version;
      }
      expect(held).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('moves the data version when another process commits a write, and only once it commits', async () => {
    const pool = await freshPostgres();
    const other = secondPool(pool);
    try {
      const mine = methods(pool);
      const theirs = methods(other);
      const client = (await mine.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z' })).id;
      for (const write of [
        () => theirs.writeSettings(client, '', ACCOUNT),
        () => theirs.writeDataConfig('custom', client, 'gbol', 'x', { a: 1 }),
        () => theirs.setProfile(client, { logo: 'x' }),
      ]) {
        const before = await mine.dataVersion();
        await write();
        expect(await mine.dataVersion()).not.toBe(before);
      }

      // A write held open in the other process: seen (as a new version) once it commits.
      const open = await other.connect();
      try {
        await open.query('BEGIN');
        await settingMethods(open).writeSettings(client, 'co1', OVERRIDE);
        const during = await mine.dataVersion();
        const unseen = await mine.readSettings(client, 'co1');
        await open.query('COMMIT');
        expect(unseen).toBeUndefined();
        expect(await mine.dataVersion()).not.toBe(during);
        expect(await mine.readSettings(client, 'co1')).toEqual(OVERRIDE);
      } finally {
        open.release();
      }
    } finally {
      await other.end();
      await pool.end();
    }
  });
});
