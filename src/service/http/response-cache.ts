// Serialised GET responses, kept until the database changes (store/version.ts), so no
// write anywhere, from this thread or the sync worker's, can leave a stale page.
//
// Bounded in bytes, overall and per client, so no client can grow the server's memory
// by asking for many distinct pages: past a bound the least recently used pages go,
// the asking client's own first.
import type { AsyncStore } from '../store/async-store.js';

export interface CacheLimits {
  /** Bytes of bodies kept for all clients together. */
  maxBytes: number;
  /** Bytes of bodies kept for one client. */
  maxBytesPerClient: number;
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxBytes: 64 * 1024 * 1024, maxBytesPerClient: 16 * 1024 * 1024 };

interface Entry {
  owner: string;
  body: Buffer;
}

export class ResponseCache {
  /** Every entry, least recently used first. */
  private readonly entries = new Map<string, Entry>();
  /** Each client's keys, least recently used first, and their bytes. */
  private readonly owners = new Map<string, { keys: Set<string>; bytes: number }>();
  private bytes = 0;
  /** The database version every entry was made at: a write anywhere makes them all stale. */
  private madeAt = '';
  /** Pages being made, by key, so requests that miss the same one together share its build. */
  private readonly building = new Map<string, { version: string; body: Promise<Buffer> }>();

  constructor(private readonly store: Pick<AsyncStore, 'dataVersion'>, private readonly limits: CacheLimits = DEFAULT_CACHE_LIMITS) {}

  /** Bytes of bodies held now, overall or for one client. */
  size(owner?: string): number {
    return owner === undefined ? this.bytes : this.owners.get(owner)?.bytes ?? 0;
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
    const hit = this.entries.get(fullKey);
    if (hit) {
      this.touch(fullKey, hit);
      return hit.body;
    }
    const pending = this.building.get(fullKey);
    if (pending && pending.version === version) return pending.body;
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
    if (held && this.madeAt === version && body.length <= this.limits.maxBytesPerClient / 4) this.add(fullKey, { owner, body });
    return body;
  }

  private clear(version: string): void {
    this.entries.clear();
    this.owners.clear();
    this.bytes = 0;
    this.madeAt = version;
  }

  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    const keys = this.owners.get(entry.owner)!.keys;
    keys.delete(key);
    keys.add(key);
  }

  private add(key: string, entry: Entry): void {
    const owner = this.owners.get(entry.owner) ?? { keys: new Set<string>(), bytes: 0 };
    this.owners.set(entry.owner, owner);
    while (owner.keys.size > 0 && owner.bytes + entry.body.length > this.limits.maxBytesPerClient) {
      this.evict(owner.keys.values().next().value!);
    }
    while (this.entries.size > 0 && this.bytes + entry.body.length > this.limits.maxBytes) {
      this.evict(this.entries.keys().next().value!);
    }
    this.entries.set(key, entry);
    owner.keys.add(key);
    owner.bytes += entry.body.length;
    this.bytes += entry.body.length;
  }

  private evict(key: string): void {
    const entry = this.entries.get(key)!;
    this.entries.delete(key);
    const owner = this.owners.get(entry.owner)!;
    owner.keys.delete(key);
    owner.bytes -= entry.body.length;
    this.bytes -= entry.body.length;
  }
}
