// A reader of GET /events/stream for tests: a connection of its own, the messages parsed
// as they arrive, waits on conditions with a deadline, and a reader that stalls on demand.
import { Client } from 'undici';
import { SseParser, type SseMessage } from '../../src/client/sse.js';
import { assertEventShapes, type DeliveredEvent } from './event-shapes.js';
import { basic } from './service.js';

export interface Reader {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  messages: SseMessage[];
  /** Everything received, as text. */
  text(): string;
  ended: boolean;
  /** Resolves once `done()` holds (checked at every chunk), rejects after `ms`. */
  until(what: string, done: () => boolean, ms?: number): Promise<void>;
  close(): void;
}

/** Opens a stream and reads it in the background (or not at all until resume(), for a reader that stalls). */
export async function openStream(baseUrl: string, apiKey: string, path: string, headers: Record<string, string> = {}, paused = false): Promise<Reader & { resume(): void; body: string }> {
  // A client of its own, destroyed at close: a shared pool may open a spare connection after an abort, which the service's close() would wait on.
  const client = new Client(baseUrl);
  const controller = new AbortController();
  const response = await client.request({ method: 'GET', path, headers: { authorization: basic(apiKey), ...headers }, signal: controller.signal });
  const parser = new SseParser();
  let received = '';
  const checks = new Set<() => void>();
  const reader = {
    status: response.statusCode,
    headers: response.headers,
    messages: [] as SseMessage[],
    body: '',
    ended: false,
    text: () => received,
    until(what: string, done: () => boolean, ms = 10_000) {
      return new Promise<void>((resolve, reject) => {
        if (done()) return resolve();
        const timer = setTimeout(() => {
          checks.delete(check);
          reject(new Error(`timed out waiting for ${what}; received: ${received.slice(-500)}`));
        }, ms);
        const check = () => {
          if (!done()) return;
          clearTimeout(timer);
          checks.delete(check);
          resolve();
        };
        checks.add(check);
      });
    },
    // Every event the stream carried is held to the public catalogue's shapes.
    close: () => {
      controller.abort();
      void client.destroy();
      assertEventShapes(reader.messages.filter((m) => m.data !== '').map((m) => JSON.parse(m.data) as DeliveredEvent));
    },
    resume: () => undefined as void,
  };
  if (response.statusCode !== 200) {
    reader.body = await response.body.text();
    reader.ended = true;
    await client.close();
    return reader;
  }
  const read = async () => {
    try {
      for await (const chunk of response.body) {
        received += (chunk as Buffer).toString('utf8');
        reader.messages.push(...parser.push(chunk as Buffer));
        for (const check of [...checks]) check();
      }
    } catch {
      // aborted by the test
    }
    reader.ended = true;
    for (const check of [...checks]) check();
  };
  if (paused) {
    reader.resume = () => void read();
  } else void read();
  return reader;
}
