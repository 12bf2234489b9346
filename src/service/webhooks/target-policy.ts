// Where webhook deliveries may go. By default only to public addresses: a client's consumer
// URL must not make the service a way into its operator's network (a database on
// 127.0.0.1, cloud metadata on 169.254.169.254, the LAN, the service's own routes). An
// address is judged by its numeric range (ipaddr.js), never by how it was written: the WHATWG
// URL parser has already made 2852039166, 0xa9fea9fe, 0177.0.0.1 and 127.1 dotted quads, and
// an IPv6 address that carries an IPv4 one (mapped, compatible, translated, 6to4, NAT64) is
// judged by the IPv4 address it carries. The operator opts in to more: every address
// (`allowPrivate`), or named HOST[:PORT]s (`allow`), delivered to whatever they resolve to.
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import { comparableHost, parseHostPort, type HostPort } from '../../lib/host-port.js';

export interface WebhookTargets {
  /** Deliver to any address, private and loopback ones included (local development, private networks). */
  allowPrivate?: boolean;
  /** HOST[:PORT] entries (`--webhook-allow`): delivered to whatever they resolve to. */
  allow?: string[];
}

/** How the refusal names a range of IPv4 ipaddr.js knows; any other special range is reserved. */
const IPV4_RANGES: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8)',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address (224.0.0.0/4)',
  linkLocal: 'a link-local address (169.254.0.0/16)',
  loopback: 'a loopback address (127.0.0.0/8)',
  carrierGradeNat: 'a shared address (100.64.0.0/10)',
  private: 'a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
};

const IPV6_RANGES: Record<string, string> = {
  unspecified: 'the unspecified address (::)',
  loopback: 'the loopback address (::1)',
  linkLocal: 'a link-local address (fe80::/10)',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  multicast: 'a multicast address (ff00::/8)',
};

function ipv4Refusal(ip: ipaddr.IPv4): string | undefined {
  const range = ip.range();
  return range === 'unicast' ? undefined : IPV4_RANGES[range] ?? 'a reserved address';
}

/** The IPv4 address in the low 32 bits, or in `parts[at]` and `parts[at + 1]`. */
function ipv4In(parts: number[], at = 6): ipaddr.IPv4 {
  const [hi = 0, lo = 0] = [parts[at], parts[at + 1]];
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

const zero = (parts: number[], from: number, to: number) => parts.slice(from, to).every((p) => p === 0);

/** The IPv4 address an IPv6 one carries, and the form that carries it. */
function carriedIPv4(parts: number[]): { ipv4: ipaddr.IPv4; form: string } | undefined {
  if (zero(parts, 0, 5) && parts[5] === 0xffff) return { ipv4: ipv4In(parts), form: 'IPv4-mapped' };
  if (zero(parts, 0, 4) && parts[4] === 0xffff && parts[5] === 0) return { ipv4: ipv4In(parts), form: 'IPv4-translated' };
  if (zero(parts, 0, 6)) return { ipv4: ipv4In(parts), form: 'IPv4-compatible' };
  if (parts[0] === 0x2002) return { ipv4: ipv4In(parts, 1), form: '6to4' };
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zero(parts, 2, 6)) return { ipv4: ipv4In(parts), form: 'NAT64' };
  return undefined;
}

function ipv6Refusal(ip: ipaddr.IPv6): string | undefined {
  const { parts } = ip;
  const range = ip.range();
  // :: and ::1 are themselves, not IPv4-compatible forms of 0.0.0.0 and 0.0.0.1.
  if (range === 'unspecified' || range === 'loopback') return IPV6_RANGES[range];
  const carried = carriedIPv4(parts);
  if (carried) {
    const refusal = ipv4Refusal(carried.ipv4);
    return refusal && `${carried.form} for ${carried.ipv4.toString()}, ${refusal}`;
  }
  // Teredo tunnels to an IPv4 address obscured in the low bits, past a relay: never checkable.
  if (parts[0] === 0x2001 && parts[1] === 0) return 'a Teredo address (2001::/32)';
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts[2] === 1) return 'a local-use NAT64 address (64:ff9b:1::/48)';
  if (range !== 'unicast') return IPV6_RANGES[range] ?? 'a reserved address';
  // Only 2000::/3 is allocated for global unicast; the rest is reserved by IANA.
  if (((parts[0] ?? 0) & 0xe000) !== 0x2000) return 'a reserved address (outside 2000::/3)';
  return undefined;
}

/** What the address is, when it is not public ('a loopback address (127.0.0.0/8)'); undefined for a public one. */
export function addressRefusal(address: string): string | undefined {
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv4' ? ipv4Refusal(ip as ipaddr.IPv4) : ipv6Refusal(ip as ipaddr.IPv6);
}

/** The names RFC 6761 keeps for this machine, whatever a resolver says. */
function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

export function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/** The operator's choice, checked: an entry of `allow` that is not HOST[:PORT] throws. */
export class TargetPolicy {
  readonly allowPrivate: boolean;
  private readonly allow: HostPort[];

  constructor(options: WebhookTargets = {}) {
    this.allowPrivate = options.allowPrivate ?? false;
    this.allow = (options.allow ?? []).map((entry) => {
      const parsed = parseHostPort(entry);
      if (typeof parsed === 'string') throw new Error(`webhook target ${JSON.stringify(entry)}: ${parsed}`);
      return parsed;
    });
  }

  /** Whether the operator lets deliveries reach host:port whatever it is (allowPrivate, or an allow entry). */
  trusts(hostname: string, port: number): boolean {
    if (this.allowPrivate) return true;
    const host = comparableHost(hostname);
    return this.allow.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
  }

  /**
   * Why a consumer may not have this URL, or undefined. An address (in any spelling) and
   * the localhost names are judged here; any other name when each delivery connects, by
   * the addresses it resolves to then (resolving here would let a client keep the
   * resolver busy, and prove nothing about the next lookup).
   */
  urlRefusal(url: URL): string | undefined {
    const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
    if (this.trusts(url.hostname, port)) return undefined;
    const host = comparableHost(url.hostname);
    if (isIP(host)) {
      const refusal = addressRefusal(host);
      return refusal && `${host} is ${refusal}`;
    }
    return isLoopbackName(host) ? `${host} is this machine (a loopback name)` : undefined;
  }
}
