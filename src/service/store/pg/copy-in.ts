// One row into PostgreSQL with COPY … FROM STDIN (FORMAT binary), its last column streamed
// from a file: for attachment bytes. An INSERT sends the file as one parameter:
// node-postgres copies it into one message and hands the socket one write the size of the
// file, and the request thread waits inside that write while the kernel takes it in (on
// loopback, its whole TCP path runs there). Here the bytes go in 64 KiB CopyData messages, each written when the
// socket has room, so requests run between them: in the upload case of bench/fairness.mjs,
// run back to back with the INSERT, another client's p99 went from 35 to 20 ms and its
// worst from 62-77 to 33-37 ms (docs/performance.md).
// The binary format (PostgreSQL's COPY documentation): a signature and two zero words,
// then per row a field count and each field as its length and its bytes, then -1.
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import type { Connection, Submittable } from 'pg';
import type { Queryable } from './query.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const CHUNK = 64 * 1024;

/** What node-postgres's connection offers a COPY (its typings leave these out). */
interface CopyConnection extends Connection {
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
}

/** A field: text (sent as its UTF-8 bytes) or an `integer` column's value. */
export type CopyField = string | number;

function fieldBytes(value: CopyField): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  const int = Buffer.alloc(4);
  int.writeInt32BE(value);
  return int;
}

/** Everything before the streamed field's bytes: the header, the row's field count, its fields, the streamed field's length. */
function rowHead(fields: readonly CopyField[], streamedLength: number): Buffer {
  const parts: Buffer[] = [SIGNATURE, Buffer.alloc(8)];
  const count = Buffer.alloc(2);
  count.writeInt16BE(fields.length + 1);
  parts.push(count);
  for (const field of fields) {
    const bytes = fieldBytes(field);
    const length = Buffer.alloc(4);
    length.writeInt32BE(bytes.length);
    parts.push(length, bytes);
  }
  const length = Buffer.alloc(4);
  length.writeInt32BE(streamedLength);
  parts.push(length);
  return Buffer.concat(parts);
}

const TRAILER = Buffer.from([0xff, 0xff]);

/**
 * A COPY as node-postgres runs a query object: it calls submit, then the handle* methods
 * as the server answers, and, through a pool, callback once it is over. It ends with
 * handleReadyForQuery, or with handleError alone (the server's refusal, or the connection
 * lost), after which the server ignores whatever copy data still comes.
 */
class CopyIn implements Submittable {
  callback?: (err: Error | null, result?: unknown) => void;
  readonly done: Promise<void>;
  private settle!: (err?: Error) => void;
  private failure?: Error;
  private ended = false;

  constructor(private readonly sql: string, private readonly head: Buffer, private readonly file: string, private readonly length: number) {
    this.done = new Promise((resolve, reject) => {
      this.settle = (err) => (err ? reject(err) : resolve());
    });
  }

  submit(connection: Connection): void {
    connection.query(this.sql);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    this.send(connection).then(() => connection.endCopyFrom(), (err: Error) => {
      this.failure ??= err;
      connection.sendCopyFail(err.message);
    });
  }

  private async send(connection: CopyConnection): Promise<void> {
    const socket = connection.stream;
    const write = async (bytes: Buffer) => {
      connection.sendCopyFromChunk(bytes);
      if (socket.writableNeedDrain) await once(socket, 'drain');
    };
    await write(this.head);
    let sent = 0;
    for await (const chunk of createReadStream(this.file, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
      // The server refused already: it ignores the rest until the copy ends.
      if (this.failure) return;
      sent += chunk.length;
      await write(chunk);
    }
    if (sent !== this.length) throw new Error(`the file has ${sent} bytes, not the ${this.length} declared`);
    await write(TRAILER);
  }

  handleCommandComplete(): void {}

  handleError(err: Error): void {
    this.failure ??= err;
    this.end();
  }

  handleReadyForQuery(): void {
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.callback?.(this.failure ?? null);
    this.settle(this.failure);
  }
}

/**
 * Inserts one row into `table`: `fields` go to the first columns, and the last column takes
 * the bytes of `file` (`length` of them). Triggers fire as for an INSERT.
 */
export async function copyRowWithFile(db: Queryable, table: string, columns: readonly string[], fields: readonly CopyField[], file: string, length: number): Promise<void> {
  const copy = new CopyIn(`COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT binary)`, rowHead(fields, length), file, length);
  // A pool answers with a promise that settles with the copy; a client with the copy itself.
  const submitted = db.query(copy) as unknown;
  await Promise.all([copy.done, submitted instanceof Promise ? submitted : undefined]);
}
