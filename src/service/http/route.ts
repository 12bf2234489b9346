// Registers a path's handlers and answers every other method on that path with 405 and
// an Allow header, so a wrong method is told apart from an unknown route. A write handler
// reads no body unless marked `withBody`: fields sent to one anyway are a 400 naming them,
// as on the routes that take a body (known-fields.ts), so a new route cannot drop them unread.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { errors } from '../errors.js';
import { refuseUnknownFields } from './known-fields.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const READS_BODY = Symbol('reads its body');

/** Marks a write handler that reads the request body and checks its fields itself. */
export function withBody(handler: Handler): Handler {
  return Object.assign(handler, { [READS_BODY]: true });
}

/** A write handler that takes no body: an empty one (none, `{}`, `null`, `[]`) is fine, fields are refused. */
function bodyless(handler: Handler): Handler {
  return (request, reply) => {
    const body = request.body;
    if (Array.isArray(body) && body.length > 0) throw errors.bodyNotTaken();
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) refuseUnknownFields(body as Record<string, unknown>, []);
    else if ((typeof body === 'string' || Buffer.isBuffer(body)) && body.length > 0) throw errors.bodyNotTaken();
    return handler(request, reply);
  };
}

export function defineRoute(app: FastifyInstance, url: string, handlers: Partial<Record<Method, Handler>>): void {
  const defined = Object.keys(handlers) as Method[];
  for (const method of defined) {
    const handler = handlers[method]!;
    const checked = method === 'GET' || READS_BODY in handler ? handler : bodyless(handler);
    app.route({ method, url, handler: checked });
  }
  const allow = defined.includes('GET') ? [...defined, 'HEAD'] : defined;
  const others = ALL_METHODS.filter((m) => !allow.includes(m));
  app.route({ method: others, url, exposeHeadRoute: false, handler: async () => { throw errors.methodNotAllowed(allow); } });
}
