// Serialised GET responses, kept until the database changes. The version is SQLite's own:
// `data_version` moves when another connection (the sync worker's) commits, and
// `total_changes()` when this one does, so no write anywhere can leave a stale page.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';

const MAX_ENTRIES = 2000;

interface Entry {
  version: string;
  body: Buffer;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private readonly versionStatement: Statement;

  constructor(db: Db) {
    this.versionStatement = db.prepare('SELECT (SELECT data_version FROM pragma_data_version) || \':\' || total_changes() AS v').pluck();
  }

  version(): string {
    return this.versionStatement.get() as string;
  }

  /** The body cached under `key`, or the freshly made one (cached for the next request). */
  getOrMake(key: string, make: () => string): Buffer {
    const version = this.version();
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.body;
    // Kept encoded, so a hit costs no UTF-8 encoding of the page.
    const body = Buffer.from(make());
    // A write between version() and make() would make this entry stale under the old version;
    // only cache what was made while the version held.
    if (this.version() === version) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { version, body });
    }
    return body;
  }
}
