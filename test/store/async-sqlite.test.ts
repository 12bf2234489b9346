// The SQLite store behind the asynchronous contract: one connection serves everyone, so a
// transaction whose work awaits must still be alone on it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';

let dir: string;
let store: AsyncStore;
const created = '2026-01-01T00:00:00Z';

function open(): AsyncStore {
  dir = mkdtempSync(join(tmpdir(), 'ferry-async-sqlite-'));
  store = sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')));
  return store;
}

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves when `release` is called: a transaction's work that waits on something outside the store. */
function gate(): { wait: Promise<void>; release: () => void } {
  let release!: () => void;
  const wait = new Promise<void>((resolve) => (release = resolve));
  return { wait, release };
}

describe('sqliteAsyncStore', () => {
  it('commits what the work wrote, and the work reads its own writes through tx', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    const company = await store.transaction(async (tx) => {
      const row = await tx.insertCompany(client.id, { name: 'Acme', tags: {} }, created);
      expect((await tx.getCompany(row.id))?.name).toBe('Acme');
      return row;
    });
    expect((await store.getCompany(company.id))?.name).toBe('Acme');
  });

  it('rolls back everything when the work throws', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    let id = '';
    await expect(store.transaction(async (tx) => {
      id = (await tx.insertCompany(client.id, { name: 'Gone', tags: {} }, created)).id;
      throw new Error('no');
    })).rejects.toThrow('no');
    expect(await store.getCompany(id)).toBeUndefined();
    expect(await store.countCompanies(client.id)).toBe(0);
  });

  it('a call from outside waits for an open transaction and sees only what it committed', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    const hold = gate();
    const entered = gate();
    const tx = store.transaction(async (inner) => {
      await inner.insertCompany(client.id, { name: 'Held', tags: {} }, created);
      entered.release();
      await hold.wait; // the transaction stays open across turns of the event loop
      await inner.insertCompany(client.id, { name: 'Second', tags: {} }, created);
    });
    await entered.wait;
    let counted: number | undefined;
    const outside = store.countCompanies(client.id).then((n) => (counted = n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted).toBeUndefined(); // still waiting: it would have read a half-done transaction
    hold.release();
    await tx;
    await outside;
    expect(counted).toBe(2);
  });

  it('transactions run one after another, never interleaved, and a nested one joins its parent', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    const order: string[] = [];
    const hold = gate();
    const first = store.transaction(async (tx) => {
      order.push('first begins');
      await hold.wait;
      await tx.transaction(async (nested) => {
        await nested.insertCompany(client.id, { name: 'Nested', tags: {} }, created);
      });
      order.push('first ends');
    });
    const second = store.transaction(async (tx) => {
      order.push('second begins');
      await tx.insertCompany(client.id, { name: 'Later', tags: {} }, created);
      order.push('second ends');
    });
    await new Promise((resolve) => setImmediate(resolve));
    hold.release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends']);
    expect(await store.countCompanies(client.id)).toBe(2);
  });

  it('calls on the outer store from inside the work join the transaction (no deadlock) and roll back with it', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    // A helper that knows only the outer store, called from a transaction's work.
    const addCompany = (name: string) => store.insertCompany(client.id, { name, tags: {} }, created);
    await store.transaction(async () => {
      await addCompany('Joined');
      expect(await store.countCompanies(client.id)).toBe(1);
      await store.transaction(async () => addCompany('Nested'));
    });
    expect(await store.countCompanies(client.id)).toBe(2);
    await expect(store.transaction(async () => {
      await addCompany('Rolled back');
      throw new Error('no');
    })).rejects.toThrow('no');
    expect(await store.countCompanies(client.id)).toBe(2);
  });

  it('a task the work started and left running does not join a later transaction', async () => {
    open();
    const client = await store.insertClient({ name: 'A', plan: 'Paid', created });
    const go = gate();
    let late: Promise<number> | undefined;
    await store.transaction(async () => {
      late = go.wait.then(() => store.countCompanies(client.id));
    });
    const hold = gate();
    const entered = gate();
    const second = store.transaction(async (tx) => {
      await tx.insertCompany(client.id, { name: 'In the second', tags: {} }, created);
      entered.release();
      await hold.wait;
    });
    await entered.wait;
    go.release();
    let counted: number | undefined;
    void late!.then((n) => (counted = n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted).toBeUndefined(); // waits for the second transaction instead of reading inside it
    hold.release();
    await second;
    expect(await late).toBe(1);
  });
});
