// Headers of file downloads: the label the client can take, and the file name.
import type { FastifyRequest } from 'fastify';

/**
 * Whether the client names application/octet-stream in Accept. The public API labels
 * downloads so, and its SDKs take no other type: such a client gets that label, everyone
 * else the file's own type. The bytes are the same.
 */
export function wantsOctetStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.split(',').some((range) => range.split(';')[0]?.trim().toLowerCase() === 'application/octet-stream');
}

/** `attachment; filename="…"` with an ASCII stand-in, and the exact name in RFC 5987 form. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
