// Listening for the notices migrations/016 sends when events or deliveries commit: one
// connection per process, outside the pool (a pooled connection would stop listening when
// it is handed back). A lost connection is opened again after a pause that grows to
// RETRY_MAX_MS; the listener is told it stopped and began again, so it looks for what it
// may have missed meanwhile.
import { Client } from 'pg';
import type { CommitNotices, NoticeKind } from '../commit-notices.js';
import { CONNECT_TIMEOUT_MS } from './pool.js';

const CHANNELS: Record<string, NoticeKind> = { ferry_events: 'events', ferry_deliveries: 'deliveries' };
const LISTEN = Object.keys(CHANNELS).map((channel) => `LISTEN ${channel}`).join('; ');
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

export function pgCommitNotices(url: string): CommitNotices {
  return {
    listen(handlers) {
      let closed = false;
      /** The connection listening, or being opened. */
      let current: Client | undefined;
      let listening = false;
      let retry: NodeJS.Timeout | undefined;
      let pause = RETRY_FIRST_MS;

      const lose = (client: Client): void => {
        void client.end().catch(() => undefined);
        if (current !== client) return;
        current = undefined;
        if (listening) {
          listening = false;
          handlers.live(false);
        }
        if (closed) return;
        retry = setTimeout(() => {
          retry = undefined;
          void connect();
        }, pause);
        retry.unref();
        pause = Math.min(pause * 2, RETRY_MAX_MS);
      };

      const connect = async (): Promise<void> => {
        const client = new Client({ connectionString: url, application_name: 'ferry', connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
        current = client;
        client.on('error', () => lose(client));
        client.on('end', () => lose(client));
        client.on('notification', ({ channel, payload }) => {
          const kind = CHANNELS[channel];
          if (kind && current === client) handlers.heard(kind, payload ? Number(payload) : undefined);
        });
        try {
          await client.connect();
          await client.query(LISTEN);
        } catch {
          lose(client);
          return;
        }
        if (current !== client) return;
        listening = true;
        pause = RETRY_FIRST_MS;
        handlers.live(true);
      };

      void connect();
      return {
        async close() {
          closed = true;
          if (retry) clearTimeout(retry);
          const client = current;
          current = undefined;
          listening = false;
          await client?.end().catch(() => undefined);
        },
      };
    },
  };
}
