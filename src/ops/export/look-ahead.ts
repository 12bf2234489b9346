// Pages requested ahead of the one being written, for a service whose `_links.next` are not
// plain page numbers (page-window.ts requests those several at once): the service prepares
// the next pages while this one is on the wire and being written.
import { parsedPage, readPage, type PageMeta, type ReadPage } from './page.js';

/**
 * Keeps up to LOOK_AHEAD pages requested ahead of the one being written. The pages are the
 * ones `_links.next` names: each page's link is requested as soon as that page arrives, and
 * so is the page after it, guessed from that link by adding one to its `page` parameter.
 * A guess is used only if the next page's own link turns out to be exactly that URL (else
 * it is dropped and the real link is requested), so the order and the records are always
 * those of `_links.next`; the guess only lets the service prepare a page while the previous
 * one is on the wire. No guess past the last page (totalResults / pageSize).
 */
export const LOOK_AHEAD = 2;

export class LookAhead {
  private readonly requested = new Map<string, Promise<ReadPage>>();

  constructor(private readonly fetch: (href: string) => Promise<ReadPage>) {}

  /** The page at `href` (already requested, or now), and the one after it requested too. */
  next(href: string, current: PageMeta): Promise<ReadPage> {
    const page = this.take(href);
    for (const stale of this.requested.keys()) this.requested.delete(stale); // guesses that were wrong
    let guess = href;
    for (let k = 1; k < LOOK_AHEAD; k++) {
      const after = followingPage(guess, current);
      if (!after) break;
      if (!this.requested.has(after)) this.requested.set(after, this.fetch(after));
      guess = after;
    }
    return page;
  }

  private take(href: string): Promise<ReadPage> {
    const page = this.requested.get(href) ?? this.fetch(href);
    this.requested.delete(href);
    return page;
  }
}

/** `href` with its page parameter plus one, or undefined (no page parameter, or past the last page). */
export function followingPage(href: string, current: PageMeta): string | undefined {
  const match = /([?&])page=(\d+)(?=&|$)/.exec(href);
  if (!match) return undefined;
  const page = Number(match[2]) + 1;
  const size = current.pageSize ?? 0;
  if (size > 0 && current.totalResults >= 0 && page > Math.ceil(current.totalResults / size)) return undefined;
  return href.slice(0, match.index) + `${match[1]}page=${page}` + href.slice(match.index + match[0].length);
}

/** Response chunks (or an already parsed body, from a client that does not do raw) as a page. */
export function toPage(body: unknown): ReadPage {
  if (Buffer.isBuffer(body) || (Array.isArray(body) && body.every((b) => Buffer.isBuffer(b)))) return readPage(body as Buffer | Buffer[]);
  return parsedPage((body ?? {}) as Parameters<typeof parsedPage>[0]);
}
