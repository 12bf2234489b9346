// Read, check, then write, on PostgreSQL. SQLite runs one transaction at a time, so what a
// transaction has read stays true until it commits. Under PostgreSQL's READ COMMITTED two
// transactions may read the same thing at once and both act on it: two creates each count
// 49 of a Free plan's 50 companies and both insert; two queuings each find no open pull
// and both add one; two pulls of a company ending together each see the other still open,
// and neither records read.completed; two product changes each read the company's list and
// write it back with only their own change; two unlinks each find the connection Linked and
// both record connection.disconnected. So inside a transaction, the reads such decisions
// rest on first lock the row the decision is about: transactions deciding on the same
// thing take turns, as on SQLite, and the rest still run side by side. A row is locked once
// per transaction: what a transaction locked stays locked until it ends.
//
// FOR NO KEY UPDATE, so inserting a child row (whose foreign key check takes KEY SHARE on
// the parent) is never held up. The order is always client before company, and company
// before what belongs to it where a transaction writes both (routes read the company
// first; setLastSync writes it before the connection). A pull ending locks its pull and
// data set rows before the company, and a queuing that holds the company only locks a data
// set that has no open pull, so never one an ending pull holds.
import type { AsyncStore } from '../async-store.js';
import type { CompanyRow } from '../companies.js';
import type { ConnectionRow } from '../connections.js';
import { row, run, type Queryable } from './query.js';

type Decisions = Pick<AsyncStore, 'countCompanies' | 'getCompany' | 'getCompanyConnection' | 'openPull' | 'openPulls' | 'queueUnlessOpen' | 'readCompletion'
  | 'listConsumers' | 'interactiveCompanies'>;

/** `plain`'s reads, each after locking what it decides on; for a transaction's client only. */
export function decisionLocks(tx: Queryable, plain: Omit<Decisions, 'getCompany' | 'getCompanyConnection'>): Decisions {
  const locked = new Set<string>();
  const lock = async (table: 'clients' | 'companies', id: string): Promise<void> => {
    if (locked.has(`${table}:${id}`)) return;
    await run(tx, `SELECT 1 FROM ${table} WHERE id = ? FOR NO KEY UPDATE`, [id]);
    locked.add(`${table}:${id}`);
  };
  const lockedCompany = async (id: string): Promise<CompanyRow | undefined> => {
    const company = await row<CompanyRow>(tx, 'SELECT * FROM companies WHERE id = ? FOR NO KEY UPDATE', [id]);
    if (company) locked.add(`companies:${id}`);
    return company;
  };
  return {
    // The Free plan's company limit.
    countCompanies: async (clientId) => {
      await lock('clients', clientId);
      return plain.countCompanies(clientId);
    },
    // What a transaction does with a company it read (its products, its fields, its connections) rests on it as read.
    getCompany: lockedCompany,
    // Two statements here, not the one read outside: a statement sees the rows as they were
    // when it started, so a connection read in the statement that waited for the company's
    // lock could be what another transaction has since changed (two unlinks would both act).
    getCompanyConnection: async (companyId, id) => {
      const company = await lockedCompany(companyId);
      if (!company) return undefined;
      return { company, connection: await row<ConnectionRow>(tx, 'SELECT * FROM connections WHERE id = ? AND company_id = ?', [id, companyId]) };
    },
    // One open pull per data set, and read.completed once the company's last one ends.
    openPull: async (companyId, dataType) => {
      await lock('companies', companyId);
      return plain.openPull(companyId, dataType);
    },
    openPulls: async (companyId) => {
      await lock('companies', companyId);
      return plain.openPulls(companyId);
    },
    queueUnlessOpen: async (companyId, pulls) => {
      await lock('companies', companyId);
      return plain.queueUnlessOpen(companyId, pulls);
    },
    readCompletion: async (companyId, types) => {
      await lock('companies', companyId);
      return plain.readCompletion(companyId, types);
    },
    // The interactive lane's companies per account (sync/lanes.ts): an advisory lock of its
    // own, so it has no place in the order of row locks above.
    interactiveCompanies: async (clientId) => {
      if (!locked.has(`lane:${clientId}`)) {
        await run(tx, "SELECT pg_advisory_xact_lock(hashtextextended('ferry.lane:' || ?, 0))", [clientId]);
        locked.add(`lane:${clientId}`);
      }
      return plain.interactiveCompanies(clientId);
    },
    // The account's webhook consumer limit.
    listConsumers: async (clientId) => {
      await lock('clients', clientId);
      return plain.listConsumers(clientId);
    },
  };
}
