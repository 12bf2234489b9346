// Small helpers for reading request bodies and building links on the service's public URL.
import type { FastifyRequest } from 'fastify';
import { errors, type ApiError, type ValidationItem } from '../errors.js';

/** The configured public URL (app.ts), never the Host header as sent. */
export function baseUrlOf(request: FastifyRequest): string {
  return request.baseUrl;
}

export function objectBody(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.bodyNotObject();
  }
  return body as Record<string, unknown>;
}

/** Throws the catalogue's error for `items` (one per problem found) when there are any. */
export function failIfAny(items: ValidationItem[], error: (validation: ValidationItem[]) => ApiError): void {
  if (items.length > 0) throw error(items);
}

export function params(request: FastifyRequest): Record<string, string> {
  return request.params as Record<string, string>;
}

export function queryOf(request: FastifyRequest): Record<string, string | string[] | undefined> {
  return request.query as Record<string, string | string[] | undefined>;
}
