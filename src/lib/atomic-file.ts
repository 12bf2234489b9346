// Files written whole or not at all: a temp file beside the target, renamed over it, so a
// crash or a full disk never leaves half a file under the real name.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
}

/** Replaces `path` with `content` in one rename (mode applies to a new file; default 0644). */
export function replaceFile(path: string, content: string, mode = 0o644): void {
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, content, { mode });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
