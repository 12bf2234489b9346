// Registers a path's handlers and answers every other method on that path with 405 and
// an Allow header, so a wrong method is told apart from an unknown route.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { errors } from '../errors.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export function defineRoute(app: FastifyInstance, url: string, handlers: Partial<Record<Method, Handler>>): void {
  const defined = Object.keys(handlers) as Method[];
  for (const method of defined) app.route({ method, url, handler: handlers[method]! });
  const allow = defined.includes('GET') ? [...defined, 'HEAD'] : defined;
  const others = ALL_METHODS.filter((m) => !allow.includes(m));
  app.route({ method: others, url, exposeHeadRoute: false, handler: async () => { throw errors.methodNotAllowed(allow); } });
}
