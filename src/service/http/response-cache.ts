// Serialised GET responses, kept until the database changes (store/version.ts), so no
// write anywhere, from this thread or the sync worker's, can leave a stale page.
import type { Db } from '../store/db.js';
import { dataVersion } from '../store/version.js';

const MAX_ENTRIES = 2000;

interface Entry {
  version: string;
  body: Buffer;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly db: Db) {}

  version(): string {
    return dataVersion(this.db);
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
