// The service's clock against this machine's, from the Date header of one answer (GET
// /profile, which also names the account). A sync run compares the service's times (when a
// data set was last read) with its own start and a results file's time, which are this
// machine's: off by a skewed clock, a run would count as done a sync that ran before it, or
// queue again one that ran since. The header, like the service's times, has whole seconds:
// the comparison holds to the second.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { isFatal } from '../../client/errors.js';

export interface ServiceClock {
  /** Milliseconds to add to a time of this machine for the same moment on the service's clock (to the second). */
  aheadMs: number;
  /** The account the run's key acts for (`clientId` of the profile), when the service said. */
  account?: string;
}

export async function readServiceClock(client: ApiClient, signal: AbortSignal): Promise<ServiceClock> {
  const sent = Date.now();
  let date = Number.NaN;
  let account: string | undefined;
  try {
    const answer = await api.profileExchange(client, signal);
    const header = answer.headers.date;
    date = Date.parse(Array.isArray(header) ? header[0] ?? '' : header ?? '');
    account = typeof answer.body?.clientId === 'string' ? answer.body.clientId : undefined;
  } catch (err) {
    if (isFatal(err) || signal.aborted) throw err;
  }
  // The second the service answered in, against the moment the question left: a run's start
  // moved by it falls in or before that second, so every pull the run queues ends after it.
  // No Date header: the clocks are taken to agree.
  return { aheadMs: Number.isNaN(date) ? 0 : date - sent, ...(account ? { account } : {}) };
}
