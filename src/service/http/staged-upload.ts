// An uploaded file as it arrives, written to a file of its own in <data-dir>/uploads/ and
// hashed on the way, so the request thread never gathers, copies or hashes a whole file:
// each chunk is hashed (about 0.1 ms for 64 KiB) and handed to the thread pool to write,
// and the upload waits for the write before it reads on. The store then moves the file
// into place (SQLite) or reads it into its row (PostgreSQL); the route removes whatever is
// left. Files a crash left behind are removed at the next start (clearStaleUploads).
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface StagedFile {
  path: string;
  size: number;
  sha256: string;
}

/** What arrived: its size counted to the end, and the file when it was within the limit. */
export interface Staged {
  size: number;
  file?: StagedFile;
}

const SUFFIX = '.upload';
/** Far longer than any upload may take (the request timeout): older files are a crash's leftovers. */
const STALE_MS = 60 * 60 * 1000;

/**
 * Writes `source` to a new file in `dir` (0600), hashing it; past `limit` bytes the file is
 * removed and the rest only counted, so a refusal can say how much was sent.
 */
export async function stageUpload(dir: string, source: AsyncIterable<Buffer> | Iterable<Buffer>, limit: number): Promise<Staged> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${randomUUID()}${SUFFIX}`);
  const handle = await open(path, 'wx', 0o600);
  const hash = createHash('sha256');
  let size = 0;
  let writing = true;
  const drop = async () => {
    if (writing) await handle.close();
    writing = false;
    await rm(path, { force: true });
  };
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (!writing) continue;
      if (size > limit) {
        await drop();
        continue;
      }
      hash.update(chunk);
      await handle.write(chunk);
    }
  } catch (err) {
    await drop();
    throw err;
  }
  if (!writing) return { size };
  await handle.close();
  return { size, file: { path, size, sha256: hash.digest('hex') } };
}

/** Removes a staged file, if it is still there. */
export async function discardStaged(file: StagedFile | undefined): Promise<void> {
  if (file) await rm(file.path, { force: true });
}

/**
 * At start: removes staged files older than any upload could be (another instance sharing
 * the dir may be writing newer ones). Their times are the file system's, so is the clock.
 */
export function clearStaleUploads(dir: string): void {
  const now = Date.now();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // no upload yet
  }
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith(SUFFIX) && now - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
  }
}
