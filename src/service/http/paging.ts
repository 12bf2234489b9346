// Paging parameters in, paged envelope out, exactly as the wire contract says: hrefs
// relative to the base URL, `self` without a query string, `next`/`previous` only when
// that page exists.
import type { FastifyReply } from 'fastify';
import { errors } from '../errors.js';
import type { PageRequest } from '../store/paging.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 5000;
const MAX_QUERY_LENGTH = 2048;

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw errors.invalidParameter(name, 'give it once');
  return value;
}

function integerParam(query: Query, name: string, fallback: number, min: number, max: number): number {
  const raw = single(query, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw errors.invalidParameter(name, `must be an integer from ${min} to ${max}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw errors.invalidParameter(name, `must be an integer from ${min} to ${max}`);
  return value;
}

export function parsePageRequest(query: Query): PageRequest {
  const request: PageRequest = {
    page: integerParam(query, 'page', 1, 1, Number.MAX_SAFE_INTEGER),
    pageSize: integerParam(query, 'pageSize', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
  };
  const filter = single(query, 'query');
  if (filter !== undefined && filter.trim() !== '') {
    if (filter.length > MAX_QUERY_LENGTH) throw errors.malformedQuery();
    request.query = filter;
  }
  const orderBy = single(query, 'orderBy');
  if (orderBy !== undefined && orderBy.trim() !== '') request.orderBy = orderBy.trim();
  return request;
}

export interface Link {
  href: string;
}

export interface PagedEnvelope<T> {
  results: T[];
  pageNumber: number;
  pageSize: number;
  totalResults: number;
  _links: { self: Link; current: Link; next?: Link; previous?: Link };
}

/** The filters a list understands, kept in its links; anything else a client sends is ignored. */
const FILTER_PARAMS = new Set(['query', 'orderBy', 'tags']);

/** A raw URL's path and query string, split at the first '?' only: a value may hold a literal '?' (`query=name=Who?`). */
function splitUrl(url: string): { path: string; search: string } {
  const at = url.indexOf('?');
  return at < 0 ? { path: url, search: '' } : { path: url.slice(0, at), search: url.slice(at + 1) };
}

/** The filters of a raw request URL in the order sent, as the links carry them (and the response cache keys on them). */
export function linkedParams(url: string): Array<[string, string]> {
  return [...new URLSearchParams(splitUrl(url).search)].filter(([name]) => FILTER_PARAMS.has(name));
}

/** `url` is the request's raw URL (path and query string) as the client sent it. */
export function envelope<T>(results: T[], total: number, request: PageRequest, url: string): PagedEnvelope<T> {
  const { path } = splitUrl(url);
  // Percent-encoding (%20, not +) so any client's URL parser reads the values back as sent.
  const others = linkedParams(url);
  const hrefFor = (page: number): string => {
    const pairs: Array<[string, string]> = [['page', String(page)], ['pageSize', String(request.pageSize)], ...others];
    return `${path}?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
  };
  const pages = Math.ceil(total / request.pageSize);
  const links: PagedEnvelope<T>['_links'] = { self: { href: path }, current: { href: hrefFor(request.page) } };
  if (request.page < pages) links.next = { href: hrefFor(request.page + 1) };
  if (request.page > 1) links.previous = { href: hrefFor(Math.min(request.page - 1, Math.max(pages, 1))) };
  return { results, pageNumber: request.page, pageSize: request.pageSize, totalResults: total, _links: links };
}

const OPEN = Buffer.from('{"results":[');
const COMMA = Buffer.from(',');

/**
 * A page of stored records sent as they are stored: their JSON bytes spliced into the
 * envelope, never parsed and never made into strings (a 1,000-record page is a megabyte).
 */
export function sendRecordPage(reply: FastifyReply, records: Uint8Array[], total: number, request: PageRequest, url: string): FastifyReply {
  const { results: _results, ...rest } = envelope([], total, request, url);
  const parts: Uint8Array[] = [OPEN];
  records.forEach((record, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(record);
  });
  parts.push(Buffer.from(`],${JSON.stringify(rest).slice(1)}`));
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts));
}
