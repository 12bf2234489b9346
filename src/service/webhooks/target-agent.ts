// The dispatcher deliveries go through, holding them to the target policy at every
// connection. An address in the URL is checked as it stands. A name is resolved once, here,
// and the connection is refused if any address it resolved to is not allowed; otherwise
// net.connect takes those checked addresses from this lookup and asks no resolver again, so
// a name that answers differently a moment later (DNS rebinding) reaches nothing unchecked.
// TLS still sends the name (SNI) and verifies the certificate against it. Hosts the operator
// trusts (target-policy.ts `trusts`) connect as any client would.
import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { addressRefusal, defaultPort, TargetPolicy } from './target-policy.js';

/** Every address a name resolves to (dns.lookup, so /etc/hosts counts as it does for any client). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const resolveAll: Resolve = (hostname) => systemLookup(hostname, { all: true });

/** A connection the policy refused. Its message is for the operator's eyes; the delivery log says less. */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
}

const KEEP_ALIVE_MS = 4_000;

function guardedLookup(resolve: Resolve): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolve(hostname).then((resolved) => {
      const addresses = options.family === 4 || options.family === 6 ? resolved.filter((a) => a.family === options.family) : resolved;
      if (addresses.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      } else if (addresses.some((a) => addressRefusal(a.address) !== undefined)) {
        callback(new TargetRefusedError(`${hostname} resolves to an address that is not allowed`), '');
      } else if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, addresses[0]!.address, addresses[0]!.family);
      }
    }, (err: NodeJS.ErrnoException) => callback(err, ''));
  };
}

/** An undici Agent (keep-alive) that connects only where `policy` allows; `resolve` is the resolver it asks, once per connection. */
export function targetAgent(policy: TargetPolicy, resolve: Resolve = resolveAll): Agent {
  const direct = buildConnector({});
  const guarded = buildConnector({ lookup: guardedLookup(resolve) });
  return new Agent({
    keepAliveTimeout: KEEP_ALIVE_MS,
    connect(options, callback) {
      if (policy.trusts(options.hostname, Number(options.port) || defaultPort(options.protocol))) {
        direct(options, callback);
      } else if (!isIP(options.hostname)) {
        guarded(options, callback);
      } else if (addressRefusal(options.hostname) === undefined) {
        direct(options, callback);
      } else {
        callback(new TargetRefusedError(`${options.hostname} is not allowed`), null);
      }
    },
  });
}

let strict: Agent | undefined;

/** The agent of callers that bring none: public addresses only. */
export function strictAgent(): Agent {
  strict ??= targetAgent(new TargetPolicy());
  return strict;
}
