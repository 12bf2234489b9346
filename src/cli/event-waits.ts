// The command line's side of waits driven by events (client/wait-for-change.ts): a waiting
// command opens one feed of the event stream for its run, unless --no-events or
// FERRY_NO_EVENTS=1 says to poll alone (the same results, found later).
import { Option } from 'commander';
import type { ApiClient } from '../client/client.js';
import type { FeedOptions } from '../client/wait-for-change.js';
import type { ChangeFeed } from '../client/change-feed.js';
import type { CommandContext } from './context.js';

export interface EventsFlag {
  /** false with --no-events. */
  events?: boolean;
}

export function noEventsOption(): Option {
  return new Option('--no-events', 'wait by polling alone, without the service\'s event stream (or set FERRY_NO_EVENTS=1)');
}

/** Whether waits may use the event stream: not with --no-events, nor with FERRY_NO_EVENTS set to anything but 0 or empty. */
export function eventsWanted(flags: EventsFlag, env: NodeJS.ProcessEnv): boolean {
  if (flags.events === false) return false;
  const off = env.FERRY_NO_EVENTS?.trim();
  return off === undefined || off === '' || off === '0';
}

/** The run's feed, or undefined when events are off; the caller closes it when the run ends. */
export async function openFeed(ctx: CommandContext, client: ApiClient, flags: EventsFlag, filter: Pick<FeedOptions, 'types' | 'companyId'>): Promise<ChangeFeed | undefined> {
  if (!eventsWanted(flags, ctx.io.env)) return undefined;
  const { openChangeFeed } = await import('../client/wait-for-change.js');
  const { io } = ctx;
  return openChangeFeed(client, {
    ...filter,
    signal: ctx.signal,
    ...(io.verbose ? { log: (line: string) => io.err(`[${line.replace(/^events: /, 'events] ')}`, { force: true }) } : {}),
  });
}
