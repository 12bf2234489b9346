// The flags of the commands that start a server and share them: `ferry serve`,
// `ferry worker` and `ferry sandbox serve`.
import { InvalidArgumentError, type Command } from 'commander';
import { hostPortList } from '../flags.js';

/** `--webhook-allow-private` and `--webhook-allow`, on `ferry serve` and `ferry worker`. */
export function webhookTargetOptions(command: Command): Command {
  return command
    .option('--webhook-allow-private', 'let webhook consumers point at private, loopback and other non-public addresses (local development, private networks)')
    .option('--webhook-allow <host[:port]>', 'let webhook consumers point at this host (any port, or this one) whatever it resolves to; repeatable', hostPortList('--webhook-allow'), []);
}

export const WEBHOOK_TARGETS_HELP = `Webhooks go to public addresses only, unless opted in: a consumer URL whose host is a
loopback, private (RFC 1918), shared (100.64.0.0/10), link-local, unique-local, multicast
or reserved address (in any spelling) or localhost is refused with a 400 naming url, and
every delivery resolves the receiver's name once, checks every address and connects only
to those (refused: "address not allowed" in the delivery log). --webhook-allow-private lifts
this for every address (local development, a private network whose clients are trusted);
--webhook-allow HOST[:PORT] for one host. Give every process on a database the same choice.
To receive events on your own machine, \`ferry listen --forward-to URL\` needs neither.
`;

/** The flags as the service takes them, and a note for the person running it when any is given. */
export function webhookTargetsOf(options: { webhookAllowPrivate?: boolean; webhookAllow: string[] }): { webhookTargets: { allowPrivate: boolean; allow: string[] }; note?: string } {
  const webhookTargets = { allowPrivate: options.webhookAllowPrivate ?? false, allow: options.webhookAllow };
  if (webhookTargets.allowPrivate) return { webhookTargets, note: 'webhook deliveries may reach private addresses (--webhook-allow-private)' };
  if (webhookTargets.allow.length > 0) return { webhookTargets, note: `webhook deliveries may also reach ${webhookTargets.allow.join(', ')} (--webhook-allow)` };
  return { webhookTargets };
}

/**
 * A flag taking an absolute http(s) URL without query, fragment or credentials (links and
 * paths are built on it), with any trailing slash removed.
 */
export function httpUrlFlag(flag: string, example: string) {
  return (value: string): string => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidArgumentError(`${flag} must be an absolute URL such as ${example}.`);
    }
    if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
      throw new InvalidArgumentError(`${flag} must be an http or https URL with no query, fragment or credentials.`);
    }
    return url.href.replace(/\/+$/, '');
  };
}
