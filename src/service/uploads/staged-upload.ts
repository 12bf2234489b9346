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
import type { Readable } from 'node:stream';

export interface StagedFile {
  path: string;
  size: number;
  sha256: string;
}

/**
 * What arrived: the file when it was within the limit; past it nothing is kept and reading
 * stopped (`over`), `size` then being the bytes seen so far.
 */
export interface Staged {
  size: number;
  over?: boolean;
  file?: StagedFile;
}

const SUFFIX = '.upload';
/** Far longer than any upload may take (the request timeout): older files are a crash's leftovers. */
const STALE_MS = 60 * 60 * 1000;

/**
 * Hands `take` each chunk of `stream`, one at a time (the stream paused while `take` works),
 * until its end (true) or until `take` says no more (false). The stream is then left paused,
 * neither read on nor destroyed: destroying a request's body would end its connection
 * before the answer is written, and the answer closes it instead (incoming.ts).
 */
export function eachChunk(stream: Readable, take: (chunk: Buffer) => boolean | Promise<boolean>): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let working: Promise<unknown> = Promise.resolve();
    const stop = () => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      // Whatever the abandoned stream reports later (the connection closing under it) is no longer anyone's concern.
      stream.on('error', () => undefined);
    };
    const onData = (chunk: Buffer) => {
      stream.pause();
      working = Promise.resolve(take(chunk)).then((more) => {
        if (more) {
          stream.resume();
          return;
        }
        stop();
        resolve(false);
      }, onError);
    };
    const onEnd = () => {
      stop();
      void working.then(() => resolve(true));
    };
    const onError = (err: unknown) => {
      stop();
      reject(err);
    };
    stream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/**
 * Writes `source` to a new file in `dir` (0600), hashing it; once past `limit` bytes the
 * file is removed and reading stops (`over`), so a refusal goes out at once.
 */
export async function stageUpload(dir: string, source: Readable | Buffer[], limit: number): Promise<Staged> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${randomUUID()}${SUFFIX}`);
  const handle = await open(path, 'wx', 0o600);
  const hash = createHash('sha256');
  let size = 0;
  const take = async (chunk: Buffer): Promise<boolean> => {
    size += chunk.length;
    if (size > limit) return false;
    hash.update(chunk);
    await handle.write(chunk);
    return true;
  };
  let ended = true;
  try {
    if (Array.isArray(source)) {
      for (const chunk of source) if (!(ended = await take(chunk))) break;
    } else {
      ended = await eachChunk(source, take);
    }
  } catch (err) {
    await handle.close();
    await rm(path, { force: true });
    throw err;
  }
  await handle.close();
  if (!ended) {
    await rm(path, { force: true });
    return { size, over: true };
  }
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
