// HOST[:PORT] as an operator writes it on the command line (`--webhook-allow`), read the way
// a URL's host is (WHATWG: lower case, IDNA, every IPv4 spelling as a dotted quad), so it
// compares equal to `new URL(…).hostname` whatever spelling either side used.

export interface HostPort {
  /** As URL.hostname has it, without IPv6 brackets or a trailing dot. */
  host: string;
  /** Any port when absent. */
  port?: number;
}

/** The host as URL.hostname has it, compared without IPv6 brackets or a trailing dot. */
export function comparableHost(hostname: string): string {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return bare.endsWith('.') ? bare.slice(0, -1) : bare;
}

/** The entry, or a sentence saying what is wrong with it. */
export function parseHostPort(value: string): HostPort | string {
  const takes = 'a host name or address with an optional port, such as hooks.internal, 10.0.0.5:8080 or [fd00::1]:443';
  const match = /^(\[[^\]]+\]|[^:[\]/?#@\s]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return `must be ${takes}`;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return 'must have a port from 1 to 65535';
  let hostname: string;
  try {
    hostname = new URL(`http://${match[1]}/`).hostname;
  } catch {
    return `must be ${takes}`;
  }
  const host = comparableHost(hostname);
  if (host === '') return `must be ${takes}`;
  return port === undefined ? { host } : { host, port };
}
