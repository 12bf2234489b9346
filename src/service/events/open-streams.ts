// The event streams open in this process. Each holds a socket for as long as its reader
// likes, so they are counted per API key, per account and in all, and one past a cap is
// refused before it starts (429 for a key or an account, 503 for the process). A stream
// gives its slot back the moment it ends.
//
// A revoked key's streams end within a second, wherever it was revoked: while streams are
// open, the database's version (which any commit from any process moves) is read every
// `watchMs`, and when it moved, one read finds which of the keys streaming here are still
// live. So the cost is one shared read per process per tick, however many streams.
import { errors } from '../errors.js';
import type { AsyncStore } from '../store/async-store.js';

export interface StreamLimits {
  /** Open streams per API key. */
  perKey: number;
  /** Open streams per account, all its keys together. */
  perAccount: number;
  /** Open streams in this process, all accounts together. */
  total: number;
}

/** When the open-file limit cannot be read. */
const FALLBACK_TOTAL = 1000;

/** In all, half the open-file limit (openFileLimit()): the other half stays for requests, the database and files. */
export function defaultStreamLimits(fileLimit: number | undefined): StreamLimits {
  return { perKey: 10, perAccount: 50, total: fileLimit === undefined ? FALLBACK_TOTAL : Math.max(1, Math.floor(fileLimit / 2)) };
}

/** How long a refused reader is told to wait: slots free up only as other streams end. */
const RETRY_AFTER_SECONDS = 5;
/** How often the keys of open streams are looked at, while the database's version moves. */
const KEY_WATCH_MS = 250;

export interface StreamSlot {
  /** Gives the slot back; once is enough, more do nothing. */
  release(): void;
  /** Called when the stream's key is found revoked: the stream ends itself. */
  cut?: () => void;
}

interface Held extends StreamSlot {
  keyId: string;
  accountId: string;
}

export class OpenStreams {
  private readonly byKey = new Map<string, Set<Held>>();
  private readonly byAccount = new Map<string, number>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The version at the last look at the keys. */
  private seen: string | undefined;
  /** A stream opened since the last look began: look at the next tick whatever the version. */
  private stale = true;
  private looking = false;

  constructor(
    private readonly limits: StreamLimits,
    private readonly store: Pick<AsyncStore, 'dataVersion' | 'liveApiKeyIds'>,
    private readonly watchMs = KEY_WATCH_MS,
  ) {}

  /** A slot for a stream of `keyId`, owned by account `accountId`; throws the 429 or 503 of the cap that is full. */
  take(keyId: string, accountId: string): StreamSlot {
    const ofKey = this.byKey.get(keyId);
    if ((ofKey?.size ?? 0) >= this.limits.perKey) throw errors.tooManyStreams('API key', this.limits.perKey, RETRY_AFTER_SECONDS);
    const ofAccount = this.byAccount.get(accountId) ?? 0;
    if (ofAccount >= this.limits.perAccount) throw errors.tooManyStreams('account', this.limits.perAccount, RETRY_AFTER_SECONDS);
    if (this.total >= this.limits.total) throw errors.streamsFull(RETRY_AFTER_SECONDS);

    let released = false;
    const held: Held = {
      keyId,
      accountId,
      release: () => {
        if (released) return;
        released = true;
        this.forget(held);
      },
    };
    if (ofKey) ofKey.add(held);
    else this.byKey.set(keyId, new Set([held]));
    this.byAccount.set(accountId, ofAccount + 1);
    this.total += 1;
    // The key was live when the request was let in, but it may have been revoked since the
    // last look: look again at the next tick, whatever the version says.
    this.stale = true;
    if (!this.timer) {
      this.timer = setInterval(() => void this.look(), this.watchMs);
      this.timer.unref();
    }
    return held;
  }

  /** Stops watching (the service is closing; its streams are being ended). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private forget(held: Held): void {
    const ofKey = this.byKey.get(held.keyId);
    ofKey?.delete(held);
    if (ofKey?.size === 0) this.byKey.delete(held.keyId);
    const ofAccount = (this.byAccount.get(held.accountId) ?? 1) - 1;
    if (ofAccount === 0) this.byAccount.delete(held.accountId);
    else this.byAccount.set(held.accountId, ofAccount);
    this.total -= 1;
    if (this.total === 0) this.close();
  }

  /** Cuts the streams of keys revoked since the last look. */
  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      // Read before the keys: a revocation committed after this read moves the version again, so the next look sees it.
      const version = await this.store.dataVersion();
      if (!this.stale && version === this.seen) return;
      this.stale = false;
      const keys = [...this.byKey.keys()];
      const live = new Set(await this.store.liveApiKeyIds(keys));
      this.seen = version;
      for (const key of keys) {
        if (live.has(key)) continue;
        for (const held of [...(this.byKey.get(key) ?? [])]) held.cut?.();
      }
    } catch {
      this.stale = true; // the database is away or closing: the next tick looks again
    } finally {
      this.looking = false;
    }
  }
}
