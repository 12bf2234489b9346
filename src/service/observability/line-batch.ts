// The process's stderr as the log writes it: lines gathered in an array and handed on as
// one string once they reach LOG_BATCH_BYTES, 200 ms after the first of them at the latest,
// and at exit, to pino's destination (sonic-boom), which writes each without blocking.
// sonic-boom can gather lines itself (minLength), but it measures the whole gathered string
// again for every line it adds (Buffer.byteLength of a growing concatenation, flattened
// each time): at 15 KiB that cost more than everything else a request line costs. A write
// costs about the same from 4 to 64 KiB, so the batch is as large as a pipe holds.
import { writeSync } from 'node:fs';
import { pino } from 'pino';

/** Characters of lines gathered before a write (bytes, for the ASCII the lines mostly are): a pipe's default capacity. */
export const LOG_BATCH_BYTES = 64 * 1024;
const WAIT_MS = 200;

type Destination = ReturnType<typeof pino.destination>;

export class LineBatch {
  private lines: string[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `out` writes to `fd`. */
  constructor(private readonly out: Pick<Destination, 'write' | 'flush' | 'flushSync'>, private readonly fd: number) {}

  write(line: string): boolean {
    this.lines.push(line);
    this.size += line.length;
    if (this.size >= LOG_BATCH_BYTES) this.handOn();
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
    const text = this.take();
    try {
      this.out.flushSync();
      if (text) writeSync(this.fd, text);
    } catch {
      // stderr closed (EPIPE) or not ready: nowhere left to write.
    }
  }

  private handOn(): void {
    const text = this.take();
    if (text) this.out.write(text);
  }

  /** The lines gathered, as one string ('' for none); the batch starts again. */
  private take(): string {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return '';
    const text = this.lines.join('');
    this.lines = [];
    this.size = 0;
    return text;
  }
}

let stderr: LineBatch | undefined;

/** The process's one batch for its stderr (fd 2), whichever logger writes it, flushed at exit. */
export function stderrLines(): LineBatch {
  if (!stderr) {
    const batch = new LineBatch(pino.destination({ dest: 2, sync: false }), 2);
    process.on('beforeExit', () => batch.flush());
    process.once('exit', () => batch.flushSync());
    stderr = batch;
  }
  return stderr;
}
