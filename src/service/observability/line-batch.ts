// The process's stderr as the log writes it: each line's UTF-8 copied into a buffer as it is
// written, the buffer handed on once it holds LOG_BATCH_BYTES, 200 ms after its first line
// at the latest, and at exit, to pino's destination (sonic-boom, in its buffer mode), which
// writes each without blocking. sonic-boom can gather lines itself (minLength), but it
// measures the whole gathered string again for every line it adds (Buffer.byteLength of a
// growing concatenation, flattened each time): at 15 KiB that cost more than everything
// else a request line costs. Lines kept as strings until a batch was joined cost a join
// (each line's pieces walked again) and an encoding of the whole batch at its write, and
// they outlived a young-generation collection or two; copied at once, a line dies young and
// its bytes are written as they are. A write costs about the same from 4 to 64 KiB, so the
// batch is as large as a pipe holds.
import { writeSync } from 'node:fs';
import { pino } from 'pino';

/** Bytes of lines gathered before a write: a pipe's default capacity. */
export const LOG_BATCH_BYTES = 64 * 1024;
/** A batch's room: the batch and one more line of up to 5,000 characters (a longer line may start a batch of its own). */
const ROOM = LOG_BATCH_BYTES + 15 * 1024;
const WAIT_MS = 200;

type Destination = ReturnType<typeof pino.destination>;
/** sonic-boom in its buffer mode: it takes Buffers (its types name only strings). */
type BufferDestination = Pick<Destination, 'flush' | 'flushSync'> & { write(data: Buffer): boolean };

export class LineBatch {
  private buffer = Buffer.allocUnsafe(ROOM);
  private used = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `out` writes to `fd`, taking Buffers (sonic-boom's `contentMode: 'buffer'`). */
  constructor(private readonly out: BufferDestination, private readonly fd: number) {}

  write(line: string): boolean {
    // A UTF-16 unit is at most 3 bytes of UTF-8: a line that may not fit goes after the batch.
    if (this.used + line.length * 3 > ROOM) {
      this.handOn();
      if (line.length * 3 > ROOM) {
        this.out.write(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    this.used += this.buffer.write(line, this.used, 'utf8');
    if (this.used >= LOG_BATCH_BYTES) this.handOn();
    else this.timer ??= setTimeout(() => this.handOn(), WAIT_MS).unref();
    return true;
  }

  /** pino's logger.flush(): the lines gathered, then the destination's own. */
  flush(done?: (err?: Error) => void): void {
    this.handOn();
    this.out.flush(done);
  }

  /**
   * Everything written before this returns, for the process's exit, which waits for no
   * write: the destination's lines, then these (handed on, they would be written later).
   * A write the destination has under way may be cut short by the exit, as with pino's own
   * destination; what cannot be written is lost, as the process ends.
   */
  flushSync(): void {
    const bytes = this.take();
    try {
      this.out.flushSync();
      if (bytes) writeSync(this.fd, bytes);
    } catch {
      // stderr closed (EPIPE) or not ready: nowhere left to write.
    }
  }

  private handOn(): void {
    const bytes = this.take();
    if (bytes) this.out.write(bytes);
  }

  /** The lines gathered, as bytes (undefined for none); the batch starts again in a buffer of its own, as the destination keeps these until written. */
  private take(): Buffer | undefined {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return undefined;
    const bytes = this.buffer.subarray(0, this.used);
    this.buffer = Buffer.allocUnsafe(ROOM);
    this.used = 0;
    return bytes;
  }
}

let stderr: LineBatch | undefined;

/** The process's one batch for its stderr (fd 2), whichever logger writes it, flushed at exit. */
export function stderrLines(): LineBatch {
  if (!stderr) {
    const batch = new LineBatch(pino.destination({ dest: 2, sync: false, contentMode: 'buffer' }) as unknown as BufferDestination, 2);
    process.on('beforeExit', () => batch.flush());
    process.once('exit', () => batch.flushSync());
    stderr = batch;
  }
  return stderr;
}
