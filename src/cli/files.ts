// Files the CLI writes: whole, or not at all (a temp file beside the target, renamed over it).
import { existsSync, rmSync } from 'node:fs';
import { link, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { replaceFile, tempPathFor } from '../lib/atomic-file.js';
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

/** A file written piece by piece under a temp name, that appears under its real name whole or not at all. */
export interface AtomicWriter {
  write(text: string): Promise<void>;
  /** Flushes to disk and puts the file under its name (replacing the old one only with `overwrite`). */
  commit(): Promise<void>;
  /** Removes the temp file; the real name is left as it was. */
  discard(): Promise<void>;
}

/** Opens `path`'s temp file for a streamed write (mode applies to the new file; default 0644). */
export async function openFileAtomic(path: string, options: { mode?: number; overwrite?: boolean } = {}): Promise<AtomicWriter> {
  const overwrite = options.overwrite ?? false;
  assertWritable(path, overwrite);
  const temp = tempPathFor(path);
  rmSync(temp, { force: true });
  const handle = await open(temp, 'wx', options.mode ?? 0o644);
  // A second Ctrl-C exits at once, with no chance to clean up: the temp file goes with the process.
  const removeTemp = () => rmSync(temp, { force: true });
  process.once('exit', removeTemp);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    process.off('exit', removeTemp);
    await handle.close().catch(() => undefined);
  };
  return {
    async write(text) {
      // A write may be short (a full disk frees up, a signal): go on until every byte is out.
      const buffer = Buffer.from(text, 'utf8');
      for (let at = 0; at < buffer.length;) at += (await handle.write(buffer, at)).bytesWritten;
    },
    async commit() {
      try {
        await handle.sync();
        await close();
        if (overwrite) await rename(temp, path);
        else {
          // link fails if the name was taken meanwhile: never replace what the user did not ask to.
          await link(temp, path).catch((err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST' ? new UsageError(`${path} already exists.`, 'Choose another --out, or add --force to replace it.') : err;
          });
          rmSync(temp, { force: true });
        }
      } catch (err) {
        await close();
        removeTemp();
        throw err;
      }
      await syncDirectory(dirname(path));
    },
    async discard() {
      await close();
      removeTemp();
    },
  };
}

/** Makes a rename durable; best effort (some filesystems refuse to fsync a directory). */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    await handle.sync().finally(() => handle.close());
  } catch {
    // the file is in place either way
  }
}
