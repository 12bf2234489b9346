// The HTTP exchange under the API client, on Node's own node:http / node:https: undici cost
// every command that talks to a service ~110 ms and ~20 MB to load, and its first request
// ~0.25 s and ~38 MB more while it compiled its WebAssembly HTTP parser.
// One keep-alive Agent per target with at most `connections` sockets. Node's agent unrefs
// a socket when it goes back to the free list (an idle pool never keeps the process
// alive), refs it again when it is reused, and drops a free socket a second before the
// server's `Keep-Alive: timeout=N` hint runs out, or after `keepAliveMs` without one.
import { Agent, request, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { finished } from 'node:stream';

/** Time to open a TCP connection (undici's default, kept). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A failure of the exchange itself, with a code the client classifies (see client.ts). */
export class TransportError extends Error {
  constructor(readonly code: 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT' | 'CLIENT_CLOSED', message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

export interface TransportOptions {
  connections: number;
  /** How long a free socket is kept without a Keep-Alive hint from the server. */
  keepAliveMs: number;
}

export interface Send {
  method: string;
  /** Path and query, sent as they are. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** No response headers this long after the request went out on a connection: HEADERS_TIMEOUT. */
  headersTimeoutMs: number;
  /** No byte of the body for this long while the reader wants more: BODY_TIMEOUT. 0: no limit. */
  bodyTimeoutMs: number;
  /** Aborting destroys the request, or the body once it flows, with the signal's reason. */
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it arrives; read it to the end or destroy it, or the socket stays taken. */
  body: IncomingMessage;
}

type RequestFn = typeof request;

export class Transport {
  private readonly target: URL;
  private readonly client: Promise<{ agent: Agent; request: RequestFn }>;
  private active = 0;
  private idle: (() => void) | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(origin: string, options: TransportOptions) {
    this.target = new URL(origin);
    const agentOptions = { keepAlive: true, maxSockets: options.connections, timeout: options.keepAliveMs };
    // node:https (TLS, crypto) loads only for an https target.
    this.client = this.target.protocol === 'https:'
      ? import('node:https').then((https) => ({ agent: new https.Agent(agentOptions), request: https.request }))
      : Promise.resolve({ agent: new Agent(agentOptions), request });
  }

  /** Resolves with the status and headers; the body is read by the caller. */
  async send(send: Send): Promise<Answer> {
    if (this.closed) throw new TransportError('CLIENT_CLOSED', 'The API client is closed.');
    const { agent, request } = await this.client;
    send.signal?.throwIfAborted();
    // An invalid header value or path throws here: nothing was sent.
    const req = request({
      agent,
      host: this.target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: this.target.port,
      method: send.method,
      path: send.path,
      headers: send.headers,
    });
    this.active += 1;
    return new Promise<Answer>((resolve, reject) => {
      new Exchange(req, send, resolve, reject, () => this.done());
      req.end(send.body);
    });
  }

  /** Waits for the requests in flight (their bodies read or destroyed), then closes every socket. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
      (await this.client).agent.destroy();
    })();
    return this.closing;
  }

  private done(): void {
    this.active -= 1;
    if (this.active === 0) this.idle?.();
  }
}

/** One request's timers and abort listener, from the request going out to the body's end. */
class Exchange {
  private timer: NodeJS.Timeout | undefined;
  private socket: Socket | undefined;
  private res: IncomingMessage | undefined;
  private ended = false;
  private readonly onAbort = () => {
    const reason = this.send.signal!.reason as Error;
    if (this.res) return void this.res.destroy(reason);
    this.req.destroy(reason);
    // Still waiting for a free socket, the request would only fail once it got one.
    this.fail(reason);
  };
  private readonly onData = () => {
    if (!this.ended) this.timer?.refresh();
  };

  constructor(
    private readonly req: ClientRequest,
    private readonly send: Send,
    resolve: (answer: Answer) => void,
    private readonly reject: (err: unknown) => void,
    private readonly finish: () => void,
  ) {
    send.signal?.addEventListener('abort', this.onAbort, { once: true });
    req.on('error', (err) => this.fail(err));
    req.on('socket', (socket) => {
      this.socket = socket;
      if (!socket.connecting) return this.awaitHeaders();
      this.arm(CONNECT_TIMEOUT_MS, () => req.destroy(new TransportError('CONNECT_TIMEOUT', `No connection within ${CONNECT_TIMEOUT_MS / 1000} s.`)));
      socket.once('connect', () => this.awaitHeaders());
    });
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: this.flow(res) }));
  }

  /** The response is in: from now on the body's silence is what is timed. */
  private flow(res: IncomingMessage): IncomingMessage {
    this.res = res;
    clearTimeout(this.timer);
    // The reader sees every error through its own reading; this keeps one it never reads from crashing the process.
    res.on('error', () => undefined);
    finished(res, () => this.end());
    const ms = this.send.bodyTimeoutMs;
    if (ms > 0 && !res.complete) {
      const socket = this.socket!;
      socket.on('data', this.onData);
      this.arm(ms, () => {
        if (res.complete) return;
        // A reader that is not asking for more (backpressure) is not a silent server.
        if (socket.isPaused()) this.timer!.refresh();
        else res.destroy(new TransportError('BODY_TIMEOUT', `No data for ${ms / 1000} s in the middle of the body.`));
      });
    }
    return res;
  }

  private fail(err: unknown): void {
    this.end();
    this.reject(err);
  }

  /** Once, when the request failed or its body ended or was destroyed. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.socket?.off('data', this.onData);
    this.send.signal?.removeEventListener('abort', this.onAbort);
    this.finish();
  }

  private awaitHeaders(): void {
    const ms = this.send.headersTimeoutMs;
    if (!this.res && !this.ended) this.arm(ms, () => this.req.destroy(new TransportError('HEADERS_TIMEOUT', `No response within ${ms / 1000} s.`)));
  }

  private arm(ms: number, fire: () => void): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(fire, ms);
  }
}

/** The body's chunks as they arrived (no copy, no join). */
export function readChunks(body: IncomingMessage): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    finished(body, (err) => (err ? reject(err) : resolve(chunks)));
  });
}

/** The body as UTF-8 text, a leading byte-order mark dropped (as undici's text() did). */
export async function readText(body: IncomingMessage): Promise<string> {
  const chunks = await readChunks(body);
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString('utf8', bom ? 3 : 0);
}
