// `--state FILE`: a bookmark per data type and company, so the next run exports only the
// records that changed since. The bookmark is the newest `modifiedDate` exported, and the
// ids of the records that carry exactly that second.
//
// The next run asks for `{user query} && modifiedDate>=bookmark` and leaves out the
// records it already exported at the bookmark second (same id, same modifiedDate). `>=`
// rather than `>`, because modifiedDate has whole seconds: a record changed later within
// the same second as the bookmark would be lost for good with `>`. So the guarantee is:
// every change is exported at least once; exactly once unless more than MAX_BOUNDARY_IDS
// records share the newest second (then those are exported again next time).
//
// The file is rewritten (temp + rename) only after an export completed: a failed or
// interrupted run leaves the bookmarks where they were, so nothing is skipped.
import { replaceFile } from '../../lib/atomic-file.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

export const STATE_VERSION = 1;
export const MAX_BOUNDARY_IDS = 1000;

export interface Bookmark {
  /** The newest modifiedDate exported (ISO 8601 UTC, as the records spell it). */
  modifiedDate: string;
  /** Ids of the exported records whose modifiedDate is exactly `modifiedDate` (at most MAX_BOUNDARY_IDS). */
  ids: string[];
  /** When the export that set it finished. */
  exportedAt?: string;
}

export interface StateFile {
  version: number;
  /** data type → company id → bookmark */
  bookmarks: Record<string, Record<string, Bookmark>>;
}

export class StateFileError extends Error {}

/** Reads the state file (a missing file is an empty state). `digest` identifies its content for resume checks. */
export function loadState(path: string): { state: StateFile; digest: string } {
  if (!existsSync(path)) return { state: { version: STATE_VERSION, bookmarks: {} }, digest: 'none' };
  const text = readFileSync(path, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StateFileError(`${path} is not JSON.`);
  }
  const state = parsed as Partial<StateFile>;
  if (!state || typeof state !== 'object' || state.version !== STATE_VERSION || typeof state.bookmarks !== 'object' || state.bookmarks === null) {
    throw new StateFileError(`${path} is not a ferry export state file (version ${STATE_VERSION}).`);
  }
  for (const [dataType, companies] of Object.entries(state.bookmarks)) {
    for (const [companyId, bookmark] of Object.entries(companies ?? {})) {
      if (typeof bookmark?.modifiedDate !== 'string' || Number.isNaN(Date.parse(bookmark.modifiedDate)) || !Array.isArray(bookmark.ids)) {
        throw new StateFileError(`${path}: the ${dataType} bookmark of company ${companyId} is not valid.`);
      }
    }
  }
  return { state: state as StateFile, digest: createHash('sha256').update(text).digest('hex').slice(0, 16) };
}

/** Writes the state file whole or not at all. */
export function saveState(path: string, state: StateFile): void {
  replaceFile(path, `${JSON.stringify(state, null, 2)}\n`);
}

/** Saves a run's new bookmarks for `dataType` (re-reading the file first, so other data types' bookmarks stay); returns the path. */
export function saveBookmarks(path: string, dataType: string, bookmarks: ReadonlyMap<string, Bookmark>): string {
  const current = loadState(path).state;
  const forType = { ...(current.bookmarks[dataType] ?? {}) };
  for (const [companyId, bookmark] of bookmarks) forType[companyId] = bookmark;
  current.bookmarks[dataType] = forType;
  saveState(path, current);
  return path;
}

/** `{user} && modifiedDate>=bookmark`; the user's query is grouped so its `||` stays inside. */
export function incrementalQuery(userQuery: string | undefined, bookmark: Bookmark | undefined): string | undefined {
  const user = userQuery?.trim() ? userQuery.trim() : undefined;
  if (!bookmark) return user;
  const since = `modifiedDate>=${bookmark.modifiedDate}`;
  return user ? `{${user}} && ${since}` : since;
}

/**
 * Follows the newest modifiedDate over one company's records, and says which records the
 * previous bookmark already covered. Its state is plain JSON for the checkpoint.
 */
export class BookmarkTracker {
  private best: number;
  private bestText: string | undefined;
  private ids: string[];
  private readonly previousIds: Set<string>;
  private readonly previousText: string | undefined;

  constructor(private readonly previous: Bookmark | undefined, resumed?: TrackerState) {
    this.previousText = previous?.modifiedDate;
    this.previousIds = new Set(previous?.ids ?? []);
    this.bestText = resumed?.modifiedDate;
    this.best = resumed?.modifiedDate ? Date.parse(resumed.modifiedDate) : Number.NEGATIVE_INFINITY;
    this.ids = resumed?.ids ? [...resumed.ids] : [];
  }

  /** Was this record exported by the run that set the previous bookmark (same id, same second)? */
  alreadyExported(record: Record<string, unknown>): boolean {
    return this.previousText !== undefined && record.modifiedDate === this.previousText && this.previousIds.has(String(record.id));
  }

  /** Notes a record that was seen (exported or left out as already exported). */
  see(record: Record<string, unknown>): void {
    const text = record.modifiedDate;
    if (typeof text !== 'string') return;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return;
    if (at > this.best) {
      this.best = at;
      this.bestText = text;
      this.ids = [];
    }
    if (at === this.best && this.ids.length < MAX_BOUNDARY_IDS && record.id !== undefined) this.ids.push(String(record.id));
  }

  state(): TrackerState {
    return this.bestText === undefined ? {} : { modifiedDate: this.bestText, ids: [...this.ids] };
  }

  /** The bookmark to save: the newest seen, or the previous one when nothing newer was seen. */
  result(exportedAt: string): Bookmark | undefined {
    if (this.bestText === undefined) return this.previous;
    if (this.previous && Date.parse(this.previous.modifiedDate) > this.best) return this.previous;
    return { modifiedDate: this.bestText, ids: this.ids, exportedAt };
  }
}

export interface TrackerState {
  modifiedDate?: string;
  ids?: string[];
}

/** Now, as a bookmark records it (seconds, UTC). */
export function bookmarkTime(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
