// Serialised GET responses, kept until the database changes (store/sqlite/version.ts,
// store/pg/version.ts), so no write anywhere, from this thread or the sync worker's, can
// leave a stale page.
// Bounded in bytes, overall and per client (lib/byte-lru.ts).
import { ByteLru, type CacheLimits } from '../../lib/byte-lru.js';
import type { AsyncStore } from '../store/async-store.js';

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxBytes: 64 * 1024 * 1024, maxBytesPerClient: 16 * 1024 * 1024 };

export class ResponseCache {
  /** Bodies by client and key. */
  private readonly bodies: ByteLru<Buffer>;
  /** The database version every entry was made at: a write anywhere makes them all stale. */
  private madeAt = '';
  /** Pages being made, by key, so requests that miss the same one together share its build. */
  private readonly building = new Map<string, { version: string; body: Promise<Buffer> }>();
  /** Lookups answered without building the page (held, or being built for another request), and those that built it: for the metrics. */
  hits = 0;
  misses = 0;

  constructor(private readonly store: Pick<AsyncStore, 'dataVersion'>, limits: CacheLimits = DEFAULT_CACHE_LIMITS) {
    this.bodies = new ByteLru(limits, (body) => body.length);
  }

  /** Bytes of bodies held now, overall or for one client. */
  size(owner?: string): number {
    return this.bodies.size(owner);
  }

  /**
   * The body cached for `owner` under `key`, or the freshly made one (cached for the next
   * request). `version` is the database's version read after the request arrived (the
   * request hook reads it once for the auth cache and this one), so no write that
   * committed before the request is missed. Requests that miss the same entry at the same
   * version wait for one build instead of each making the page.
   */
  async getOrMake(owner: string, key: string, version: string, make: () => Promise<string>): Promise<Buffer> {
    if (version !== this.madeAt) this.clear(version);
    const fullKey = `${owner}\n${key}`;
    const hit = this.bodies.get(fullKey);
    if (hit) {
      this.hits += 1;
      return hit;
    }
    const pending = this.building.get(fullKey);
    if (pending && pending.version === version) {
      this.hits += 1;
      return pending.body;
    }
    this.misses += 1;
    const body = this.build(owner, fullKey, version, make);
    this.building.set(fullKey, { version, body });
    try {
      return await body;
    } finally {
      if (this.building.get(fullKey)?.body === body) this.building.delete(fullKey);
    }
  }

  private async build(owner: string, fullKey: string, version: string, make: () => Promise<string>): Promise<Buffer> {
    // Kept encoded, so a hit costs no UTF-8 encoding of the page.
    const body = Buffer.from(await make());
    // A write between the version's read and make() would make this entry stale under the
    // old version; only cache what was made while the version held. Requests overlap, so
    // another may have moved the cache on to a newer version meanwhile: the entry must be
    // of the one it holds.
    const held = (await this.store.dataVersion()) === version;
    if (held && this.madeAt === version) this.bodies.set(owner, fullKey, body);
    return body;
  }

  private clear(version: string): void {
    this.bodies.clear();
    this.madeAt = version;
  }
}
