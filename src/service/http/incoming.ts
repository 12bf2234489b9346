// How requests arrive. Each must arrive whole, headers and body, within the request timeout:
// node's http server keeps the time (requestTimeout, headersTimeout) and the answer here is
// a 408 written on the bare socket, which is then closed. The clock stops once the request
// is in, so a response may take as long as it needs (the event stream, large downloads).
// A response sent before its request's body was read to the end (a refusal: no key, an
// unknown route, a body too large) closes the connection, so the rest is never read
// (unless it is a small one, of declared length: that is read, keeping the connection).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { durationText } from '../../lib/duration.js';
import { errorBody, errors, type ApiError } from '../errors.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Node's default for the headers alone; never more than the whole request's time. */
const HEADERS_TIMEOUT_MS = 60_000;

export interface ArrivalOptions {
  requestTimeout: number;
  http: ServerOptions;
  clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => void;
}

/** A socket-level answer (no request object to log it through): its status and correlation id. */
export type ClientErrorAnswered = (statusCode: number, correlationId: string) => void;

/** Fastify's options for a request timeout of `timeoutMs`; `answered` is told of each answer written on a bare socket. */
export function arrivalOptions(timeoutMs: number, answered?: ClientErrorAnswered): ArrivalOptions {
  return {
    requestTimeout: timeoutMs,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, timeoutMs),
      // How often node looks for late requests (its default, 30 s, would let a 60 s timeout run to 90 s).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeoutMs / 4))),
    },
    clientErrorHandler: (err, socket) => answerClientError(err, socket, timeoutMs, answered),
  };
}

/** What a socket-level error is, in the catalogue's words. */
function clientError(err: NodeJS.ErrnoException, timeoutMs: number): ApiError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout(durationText(timeoutMs));
  if (err.code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  return errors.malformedRequest();
}

/**
 * Node's 'clientError': the request timed out, or could not be parsed. There is no request
 * object to answer through, so the envelope goes on the socket as it is, and the socket is
 * closed: what the client sends next cannot be trusted to start a request.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, timeoutMs: number, answered?: ClientErrorAnswered): void {
  // A reset: the client is gone.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // A response already under way on this socket (node keeps it there) cannot be followed by another.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const apiError = clientError(err, timeoutMs);
  const correlationId = randomUUID();
  const body = JSON.stringify(errorBody(apiError, correlationId));
  const head = [
    `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Correlation-Id: ${correlationId}`,
    'Connection: close',
  ];
  // Written and closed at once, as node itself does: the parser must not read on into a request.
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  socket.destroy();
  answered?.(apiError.statusCode, correlationId);
}

/**
 * What a connection still reads after refusing a body: a client sending it sees the answer
 * and stops, where closing at once would reset the connection under it and lose the answer
 * (TCP resets a socket closed with bytes unread). Far below any body worth draining.
 */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 2000;

/**
 * Instead of node's destroySoon() once the answer is written: half-closes, reads on and
 * drops the body for a little while, and closes when it ends, or at the byte or time bound.
 */
function lingerThenClose(socket: Socket, body: IncomingMessage): void {
  socket.end();
  let left = LINGER_BYTES;
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MS);
  body.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left <= 0) close();
  });
  body.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  // A route that stopped reading the body left it paused, or piped into a parser of its own.
  body.unpipe();
  body.resume();
}

/**
 * A body declared this small is still read to its end when refused, as node does, so the
 * connection serves the next request (a 401 or a 429 does not cost the client its connection).
 */
const DRAIN_AT_MOST = 64 * 1024;

/**
 * An onSend hook: a response to a request whose body has not all arrived, and is not a
 * small one of declared length, ends the connection, so node stops reading instead of
 * draining the rest to keep it alive.
 */
export async function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = request.raw;
  if (body.complete) return;
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) <= DRAIN_AT_MOST) return;
  reply.header('Connection', 'close');
  const socket = body.socket;
  // Node ends a `Connection: close` connection with destroySoon() once the answer is written.
  socket.destroySoon = () => lingerThenClose(socket, body);
}
