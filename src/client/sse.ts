// A parser for text/event-stream, as the WHATWG HTML standard's "event stream
// interpretation" says: UTF-8 (a leading BOM dropped), lines ending in CRLF, LF or CR
// (a CR at the end of one chunk and an LF at the start of the next are one line end),
// `:` comments, `data` lines joined with LF, `id` setting the last event id even for a
// message without data (which dispatches nothing), and a trailing partial message
// discarded at the end of the stream. Chunks may be split anywhere, even inside a UTF-8
// character.
//
// Not the eventsource-parser package (3.1.1): fed the cases of
// test/client/event-stream.test.ts in place of this class, it fails four. It reports an
// `id` only with data, so the stream's starting point (`id: N` and a blank line) never
// becomes the resume point and a reconnect before the first event loses its place (its
// `onId` for that comes after 3.1.1, beside a release that drops Node 20, which ferry runs on).
// And it holds a CR that ends a chunk until the next chunk comes, so a stream with CR line
// ends keeps its last message back.

export interface SseMessage {
  /** The `event` field, or `message` when there was none. */
  type: string;
  data: string;
  /** The last event id at dispatch (carried over from earlier messages when this one had no `id`). */
  lastEventId: string;
}

/** A line (or an unfinished message) this long is not an event stream we can read. */
export const MAX_PENDING_CHARS = 8 * 1024 * 1024;

export class SseParser {
  /** The last event id string: what a reconnecting reader sends as Last-Event-ID. */
  lastEventId = '';
  /** The `retry` field's reconnection time in ms, when the stream gave one. */
  retryMs: number | undefined;

  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private started = false;
  /** The previous chunk ended with CR: an LF starting this one belongs to it. */
  private skipLf = false;
  private data = '';
  private eventType = '';
  private idBuffer = '';

  /** Feeds a chunk; returns the messages it completed, in order. */
  push(chunk: Uint8Array | string): SseMessage[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLf && text.length > 0) {
      this.skipLf = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf('\r', start);
      const lf = this.buffer.indexOf('\n', start);
      if (cr === -1 && lf === -1) break;
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      const line = this.buffer.slice(start, end);
      if (this.buffer[end] === '\r') {
        if (end + 1 < this.buffer.length) start = this.buffer[end + 1] === '\n' ? end + 2 : end + 1;
        else {
          start = end + 1;
          this.skipLf = true;
        }
      } else start = end + 1;
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length + this.data.length > MAX_PENDING_CHARS) throw new Error(`The event stream sent more than ${MAX_PENDING_CHARS} characters without ending a message.`);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') return this.dispatch(out);
    if (line[0] === ':') return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // other fields are ignored
    }
  }

  private dispatch(out: SseMessage[]): void {
    this.lastEventId = this.idBuffer;
    if (this.data === '') {
      this.eventType = '';
      return;
    }
    out.push({ type: this.eventType || 'message', data: this.data.slice(0, -1), lastEventId: this.lastEventId });
    this.data = '';
    this.eventType = '';
  }
}
