// HTTP/1.1 over a bare socket (node:net), for what fetch cannot do: send a body slower than
// the server's deadline, or far larger than it will read, and see exactly when the answer
// came and when the server closed the connection, counted in the body bytes written by then.
import { connect, type Socket } from 'node:net';
import type { CallResult } from './service.js';

export type RawBody =
  /** Sent at once. */
  | { bytes: Buffer }
  /** One byte at a time, `everyMs` apart (Content-Length set to its length). */
  | { trickle: Buffer; everyMs: number }
  /** `prefix`, then `total` bytes of spaces, chunked, as fast as the socket takes them. */
  | { flood: number; prefix?: Buffer };

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: RawBody;
  /** The request line and headers too, one byte every `everyMs` (a slow-headers client). */
  trickleHeadMs?: number;
  /** The socket is destroyed and the outcome given at this point whatever happened. */
  deadlineMs?: number;
}

export interface RawOutcome {
  /** The server's answer as received (undefined when none came). */
  response?: CallResult;
  /** Body bytes written when the first byte of the answer arrived. */
  sentAtAnswer?: number;
  /** Body bytes written when the socket closed (or at the deadline). */
  sentAtClose: number;
  /** The server closed the connection (false: it was still open at the deadline). */
  closed: boolean;
  /** The whole body had been written. */
  bodyDone: boolean;
}

const CHUNK = 64 * 1024;

/** Parses a response's head and Content-Length body out of the bytes received. */
function parseResponse(bytes: Buffer): CallResult | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const length = Number(headers.get('content-length') ?? 0);
  const text = bytes.subarray(end + 4, end + 4 + length).toString('utf8');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status, headers, body, text };
}

export function rawRequest(baseUrl: string, request: RawRequest): Promise<RawOutcome> {
  const { hostname, port } = new URL(baseUrl);
  const body = request.body;
  const headers: Record<string, string> = { host: `${hostname}:${port}`, ...request.headers };
  if (body && 'flood' in body) headers['transfer-encoding'] = 'chunked';
  else if (body) headers['content-length'] = String('bytes' in body ? body.bytes.length : body.trickle.length);
  const head = Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'latin1');

  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let sent = 0;
    let sentAtAnswer: number | undefined;
    let bodyDone = false;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearInterval(timer);
      socket.destroy();
      const response = parseResponse(Buffer.concat(received));
      resolve({ ...(response ? { response } : {}), ...(sentAtAnswer !== undefined ? { sentAtAnswer } : {}), sentAtClose: sent, closed, bodyDone });
    };
    const open = () => !finished && !socket.destroyed && socket.writable;

    /** Writes `bytes` one at a time, then calls `next`. */
    const trickle = (bytes: Buffer, everyMs: number, count: boolean, next: () => void) => {
      let at = 0;
      const timer = setInterval(() => {
        if (!open()) return clearInterval(timer);
        socket.write(bytes.subarray(at, at + 1));
        at += 1;
        if (count) sent += 1;
        if (at === bytes.length) {
          clearInterval(timer);
          next();
        }
      }, everyMs);
      timers.push(timer);
    };

    const frameOf = (payload: Buffer) => Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n')]);
    const flood = (total: number, prefix?: Buffer) => {
      const frame = frameOf(Buffer.alloc(CHUNK, 0x20));
      if (prefix) socket.write(frameOf(prefix));
      const pump = () => {
        while (open() && sent < total) {
          sent += CHUNK;
          if (!socket.write(frame)) return void socket.once('drain', pump);
        }
        if (open() && sent >= total) {
          socket.write('0\r\n\r\n');
          bodyDone = true;
          socket.end();
        }
      };
      pump();
    };

    const sendBody = () => {
      if (!body) return void (bodyDone = true);
      if ('bytes' in body) {
        // With the head, in one write: the whole request arrives at once.
        socket.write(Buffer.concat([head, body.bytes]));
        sent = body.bytes.length;
        bodyDone = true;
      } else if ('trickle' in body) {
        trickle(body.trickle, body.everyMs, true, () => (bodyDone = true));
      } else {
        flood(body.flood, body.prefix);
      }
    };

    socket.on('connect', () => {
      if (request.trickleHeadMs !== undefined) trickle(head, request.trickleHeadMs, false, sendBody);
      else {
        if (!body || !('bytes' in body)) socket.write(head);
        sendBody();
      }
    });
    socket.on('data', (chunk: Buffer) => {
      sentAtAnswer ??= sent;
      received.push(chunk);
    });
    // EPIPE or a reset while writing: the server closed its side; what it sent is kept.
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
    timers.push(setTimeout(() => finish(false), request.deadlineMs ?? 30_000));
  });
}
