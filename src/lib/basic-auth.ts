// API keys travel as `Authorization: Basic base64(key)`; read the same way by the service
// and by the sandbox's admin routes.

/** The API key inside `Basic <base64(key)>`; a trailing ':' (curl -u KEY:) is accepted too. */
export function apiKeyFromHeader(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8').replace(/:$/, '');
  return /^[\x21-\x7e]+$/.test(decoded) ? decoded : undefined;
}
