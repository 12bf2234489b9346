// Webhook receivers for the tests: real node:http servers on 127.0.0.1 whose behaviour a
// test switches at any time (answer, refuse connections, hang, reset, redirect, answer 2 MB),
// checking every delivery's signature with the `standardwebhooks` package (not ferry's code).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eventsOf, recordEvent } from '../../src/service/events/record.js';
import type { Service } from '../../src/service/app.js';
import type { CompanyRow } from '../../src/service/store/companies.js';
import { assertEventShapes } from '../helpers/event-shapes.js';

export interface Received {
  /** The request's path and query (several consumers may share a receiver, each on its own path). */
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  event: { id: string; eventType: string; generatedDate: string; payload: any };
  /** Whether the signature checked out with the consumer's secret (undefined: no secret known). */
  verified: boolean | undefined;
  /** Date.now() when it arrived. */
  at: number;
}

export type Mode =
  | { kind: 'ok'; status?: number }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'redirect'; location: string }
  | { kind: 'big'; status: number; bytes: number };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests that arrived, whatever was answered (hangs and resets too). */
  requests: number;
  /** Requests held open by 'hang' now, and the most at once so far. */
  hanging(): number;
  mostHanging: number;
  mode: Mode;
  /** The consumer's secret, for the signature check. */
  secret: string | undefined;
  /** Secrets of consumers on other paths of this receiver. */
  secrets: Map<string, string>;
  /** Stops accepting connections (connection refused) until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Bytes of a 'big' answer actually written before the client went away. */
  bigWritten: number;
  close(): Promise<void>;
}

export async function startReceiver(mode: Mode = { kind: 'ok' }): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      receiver.requests += 1;
      const current = receiver.mode;
      if (current.kind === 'reset') {
        request.socket.destroy();
        return;
      }
      if (current.kind === 'hang') {
        hanging.add(response);
        receiver.mostHanging = Math.max(receiver.mostHanging, hanging.size);
        response.on('close', () => hanging.delete(response));
        return;
      }
      if (current.kind === 'redirect') {
        response.writeHead(307, { location: current.location }).end();
        return;
      }
      if (current.kind === 'big') {
        response.writeHead(current.status, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(16 * 1024, 'x');
        let left = current.bytes;
        const pump = () => {
          while (left > 0) {
            const ok = response.write(chunk);
            left -= chunk.length;
            receiver.bigWritten += chunk.length;
            if (!ok) {
              response.once('drain', pump);
              return;
            }
          }
          response.end();
        };
        response.on('error', () => undefined);
        pump();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers as Record<string, string>;
      let verified: boolean | undefined;
      const secret = receiver.secrets.get(request.url ?? '') ?? receiver.secret;
      if (secret !== undefined) {
        try {
          new Webhook(secret).verify(body, headers);
          verified = true;
        } catch {
          verified = false;
        }
      }
      if (current.kind === 'ok') {
        receiver.received.push({
          path: request.url ?? '', id: headers['webhook-id']!, timestamp: headers['webhook-timestamp']!, signature: headers['webhook-signature']!, body, event: JSON.parse(body), verified, at: Date.now(),
        });
      }
      const status = current.kind === 'ok' ? current.status ?? 204 : current.status;
      response.writeHead(status, current.kind === 'status' ? current.headers : undefined).end();
    });
  };
  let server: Server = createServer(handle);
  const track = (s: Server) => s.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  track(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  const stopServer = async () => {
    for (const r of hanging) r.destroy();
    hanging.clear();
    for (const s of sockets) s.destroy();
    if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    listening = false;
  };
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received: [],
    requests: 0,
    hanging: () => hanging.size,
    mostHanging: 0,
    mode,
    secret: undefined,
    secrets: new Map(),
    bigWritten: 0,
    down: stopServer,
    async up() {
      if (listening) return;
      server = createServer(handle);
      track(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
      listening = true;
    },
    // Every event it received is held to the public catalogue's shapes.
    async close() {
      await stopServer();
      assertEventShapes(receiver.received.map((r) => r.event));
    },
  };
  return receiver;
}

/** The ids of what a receiver got, each once, and how many times each came. */
export function countsById(received: Received[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  return counts;
}

/** Records an event as the service's own code does (in a transaction), for a company or none. */
export async function emit(service: Service, clientId: string, eventType: string, payload: Record<string, unknown>, company?: CompanyRow | null): Promise<string> {
  const event = await service.store.transaction(() => recordEvent(eventsOf(service.context), { clientId, eventType, payload, company: company ?? null }));
  return event.id;
}
