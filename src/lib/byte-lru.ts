// Values kept by key, bounded in bytes overall and per client, so no client can grow the
// server's memory by asking for many distinct ones: past a bound the least recently used
// values go, the adding client's own first. The response cache and the PDF cache use it.

export interface CacheLimits {
  /** Bytes of values kept for all clients together. */
  maxBytes: number;
  /** Bytes of values kept for one client; no single value over a quarter of it is kept. */
  maxBytesPerClient: number;
}

interface Entry<Value> {
  owner: string;
  value: Value;
  bytes: number;
}

export class ByteLru<Value> {
  /** Every entry, least recently used first. */
  private readonly entries = new Map<string, Entry<Value>>();
  /** Each client's keys, least recently used first, and their bytes. */
  private readonly owners = new Map<string, { keys: Set<string>; bytes: number }>();
  private bytes = 0;

  constructor(private readonly limits: CacheLimits, private readonly bytesOf: (value: Value) => number) {}

  /** Bytes held now, overall or for one client. */
  size(owner?: string): number {
    return owner === undefined ? this.bytes : this.owners.get(owner)?.bytes ?? 0;
  }

  /** The value under `key`, now the most recently used. */
  get(key: string): Value | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    const keys = this.owners.get(entry.owner)!.keys;
    keys.delete(key);
    keys.add(key);
    return entry.value;
  }

  /** Keeps `value` under `key` for `owner` (replacing what the key held), unless it is too large to keep. */
  set(owner: string, key: string, value: Value): void {
    if (this.entries.has(key)) this.evict(key);
    const bytes = this.bytesOf(value);
    if (bytes > this.limits.maxBytesPerClient / 4) return;
    for (let mine = this.owners.get(owner); mine && mine.bytes + bytes > this.limits.maxBytesPerClient; mine = this.owners.get(owner)) {
      this.evict(mine.keys.values().next().value!);
    }
    while (this.entries.size > 0 && this.bytes + bytes > this.limits.maxBytes) this.evict(this.entries.keys().next().value!);
    const held = this.owners.get(owner) ?? { keys: new Set<string>(), bytes: 0 };
    this.owners.set(owner, held);
    this.entries.set(key, { owner, value, bytes });
    held.keys.add(key);
    held.bytes += bytes;
    this.bytes += bytes;
  }

  clear(): void {
    this.entries.clear();
    this.owners.clear();
    this.bytes = 0;
  }

  private evict(key: string): void {
    const entry = this.entries.get(key)!;
    this.entries.delete(key);
    const owner = this.owners.get(entry.owner)!;
    owner.keys.delete(key);
    owner.bytes -= entry.bytes;
    if (owner.keys.size === 0) this.owners.delete(entry.owner);
    this.bytes -= entry.bytes;
  }
}
