// The file as the public accounting SDK (@codat/accounting 0.37) uploads it. Its multipart
// body has no file part: the content is a text field with an empty name holding
// `content.toString()`, and the file name is a field named `requestBody`. So a Uint8Array
// arrives as its decimal bytes joined by commas ("37,80,68,70,…"), which decode exactly;
// a Node Buffer arrives as its UTF-8 text, exact for text files, while the SDK has already
// replaced any bytes that are not UTF-8 with U+FFFD. Decoded as it streams in, keeping at
// most `limit` bytes of either reading.

/** U+FFFD in UTF-8: what the SDK's Buffer.toString() puts where a byte was not UTF-8. */
const REPLACEMENT = Buffer.from([0xef, 0xbf, 0xbd]);

export interface SdkContent {
  chunks: Buffer[];
  size: number;
  /** Text with U+FFFD in it: most likely binary bytes the SDK lost on the way. */
  damaged: boolean;
}

export class SdkContentDecoder {
  private readonly raw: Buffer[] = [];
  private rawSize = 0;
  private readonly decoded: Buffer[] = [];
  private decodedSize = 0;
  /** Still exactly the form Uint8Array.prototype.toString gives. */
  private numeric = true;
  private value = 0;
  private digits = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.rawSize += chunk.length;
    if (this.rawSize <= this.limit) this.raw.push(chunk);
    else this.raw.length = 0;
    if (this.numeric) this.decode(chunk);
  }

  /**
   * The file's size so far, by the reading that holds: the decoded bytes while the text is
   * numeric, else the text itself (always the longer, so past the limit either way once past it here).
   */
  get size(): number {
    return this.numeric ? this.decodedSize : this.rawSize;
  }

  finish(): SdkContent {
    if (this.numeric && this.digits > 0) {
      this.emit(Buffer.from([this.value]));
      return { chunks: this.decoded, size: this.decodedSize, damaged: false };
    }
    const damaged = this.rawSize <= this.limit && Buffer.concat(this.raw).includes(REPLACEMENT);
    return { chunks: this.raw, size: this.rawSize, damaged };
  }

  private decode(chunk: Buffer): void {
    const out = Buffer.allocUnsafe(Math.ceil(chunk.length / 2) + 1);
    let n = 0;
    for (const c of chunk) {
      if (c >= 0x30 && c <= 0x39) {
        // No leading zeros, at most 255: anything else is text that only looks numeric.
        if (this.digits > 0 && this.value === 0) return this.notNumeric();
        this.value = this.value * 10 + (c - 0x30);
        this.digits += 1;
        if (this.value > 255) return this.notNumeric();
      } else if (c === 0x2c && this.digits > 0) {
        out[n++] = this.value;
        this.value = 0;
        this.digits = 0;
      } else {
        return this.notNumeric();
      }
    }
    this.emit(out.subarray(0, n));
  }

  private emit(bytes: Buffer): void {
    this.decodedSize += bytes.length;
    if (this.decodedSize <= this.limit) this.decoded.push(bytes);
    else this.decoded.length = 0;
  }

  private notNumeric(): void {
    this.numeric = false;
    this.decoded.length = 0;
  }
}
