// Small helpers for reading request bodies and building links on the service's public URL.
import type { FastifyRequest } from 'fastify';
import { errors, type ValidationItem } from '../errors.js';

/** The configured public URL (app.ts), never the Host header as sent. */
export function baseUrlOf(request: FastifyRequest): string {
  return request.baseUrl;
}

export function objectBody(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.badRequest('The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

export function failIfAny(items: ValidationItem[], message = 'The request is not valid.'): void {
  if (items.length > 0) throw errors.badRequest(message, items);
}

export function params(request: FastifyRequest): Record<string, string> {
  return request.params as Record<string, string>;
}

export function queryOf(request: FastifyRequest): Record<string, string | string[] | undefined> {
  return request.query as Record<string, string | string[] | undefined>;
}
