// Files the CLI writes: whole, or not at all (a temp file beside the target, renamed over it).
import { existsSync } from 'node:fs';
import { replaceFile } from '../lib/atomic-file.js';
import { UsageError } from './errors.js';

export { tempPathFor } from '../lib/atomic-file.js';

/** Refuses to replace a file the user did not ask to replace; call it before doing any work. */
export function assertWritable(path: string, overwrite: boolean): void {
  if (!overwrite && existsSync(path)) {
    throw new UsageError(`${path} already exists.`, 'Choose another --out, or add --force to replace it.');
  }
}

export function writeFileAtomic(path: string, content: string, options: { mode?: number; overwrite?: boolean } = {}): void {
  assertWritable(path, options.overwrite ?? false);
  replaceFile(path, content, options.mode);
}
