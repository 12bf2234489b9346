// What a job's pulls share of their connections: each connection, its tokens and its
// company's client id read once for the job (not once per data type), its tokens
// refreshed once when a page finds them expired, however many pulls found it at once, and
// the account's data configurations for its platform read once, all data types together
// (and not at all for a kind the connection's read found it has none of).
import { isoSeconds } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import type { Tokens } from '../adapters/verifier.js';
import { freshTokens, openTokens } from '../tokens.js';
import type { ConfigKind } from '../store/data-configs.js';
import type { SyncDeps } from './deps.js';
import type { ConfigReader } from './pull-source.js';

export type PullConnection = NonNullable<Awaited<ReturnType<AsyncStore['getPullConnection']>>>;
type Connection = PullConnection['connection'];

export class ConnectionAccess {
  private readonly found = new Map<string, Promise<PullConnection | undefined>>();
  private readonly opened = new Map<string, Tokens | undefined>();
  private readonly current = new Map<string, Promise<Tokens>>();
  private readonly configured = new Map<string, Promise<Map<string, unknown>>>();

  constructor(private readonly deps: SyncDeps) {}

  /** The connection as getPullConnection reads it, once per job. */
  connection(id: string): Promise<PullConnection | undefined> {
    let found = this.found.get(id);
    if (!found) {
      found = this.deps.store.getPullConnection(id);
      this.found.set(id, found);
    }
    return found;
  }

  /** The connection's stored tokens, opened once; undefined when it has none. */
  stored(found: PullConnection): Tokens | undefined {
    const { id } = found.connection;
    if (!this.opened.has(id)) this.opened.set(id, openTokens(this.deps.sealer, id, found.sealed));
    return this.opened.get(id);
  }

  /** Tokens to fetch with: the stored ones, refreshed first when about to expire (once per job). */
  tokens(connection: Connection, stored: Tokens): Promise<Tokens> {
    let tokens = this.current.get(connection.id);
    if (!tokens) {
      tokens = freshTokens(this.deps.store, this.deps.sealer, this.deps.adapter, connection, this.now, { stored });
      this.current.set(connection.id, tokens);
    }
    return tokens;
  }

  /** The platform refused `refused`: refreshed once, whichever pull asks first; the others get the same. */
  async refused(connection: Connection, refused: Tokens): Promise<Tokens> {
    const held = this.current.get(connection.id);
    if (held && (await held.catch(() => undefined)) !== refused) return held;
    const next = freshTokens(this.deps.store, this.deps.sealer, this.deps.adapter, connection, this.now, { refused });
    this.current.set(connection.id, next);
    return next;
  }

  /** The account's configurations for the connection's platform, each kind it has read once for the job (one it has none of, never). */
  configs({ clientId, connection, configured }: PullConnection): ConfigReader {
    const platformKey = connection.integration_key;
    return async (kind: ConfigKind, name: string) => {
      if (!configured[kind]) return undefined;
      const key = JSON.stringify([kind, clientId, platformKey]);
      let all = this.configured.get(key);
      if (!all) {
        all = this.deps.store.readDataConfigs(kind, clientId, platformKey);
        this.configured.set(key, all);
      }
      return (await all).get(name);
    };
  }

  private readonly now = (): string => isoSeconds(this.deps.clock.now());
}
