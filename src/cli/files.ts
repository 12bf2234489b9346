// Files the CLI writes: whole, or not at all (a temp file beside the target, renamed over it).
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './errors.js';

export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
}

/** Refuses to replace a file the user did not ask to replace; call it before doing any work. */
export function assertWritable(path: string, overwrite: boolean): void {
  if (!overwrite && existsSync(path)) {
    throw new UsageError(`${path} already exists.`, 'Choose another --out, or add --force to replace it.');
  }
}

export function writeFileAtomic(path: string, content: string, options: { mode?: number; overwrite?: boolean } = {}): void {
  assertWritable(path, options.overwrite ?? false);
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, content, { mode: options.mode ?? 0o644 });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
