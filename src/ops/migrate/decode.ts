// The bytes of a migration CSV on their way to the parser: UTF-8 is checked, so a file
// saved in another encoding stops at its first bad byte (line and byte offset named)
// instead of silently losing characters; Latin-1 (--encoding latin1) is turned into UTF-8.
// A file that is not text at all (a spreadsheet, an archive) is called binary, not blamed
// on its encoding: its first line holds control bytes no CSV header has, or it breaks
// UTF-8 after a NUL byte, which Latin-1 text never holds.
import { Transform, type TransformCallback } from 'node:stream';
import { CsvFormatError } from './errors.js';

export type InputEncoding = 'utf8' | 'latin1';

/** Continuation bytes a UTF-8 lead byte announces, or -1 for a byte that cannot start a character. */
function continuations(byte: number): number {
  if (byte < 0x80) return 0;
  if (byte >= 0xc2 && byte <= 0xdf) return 1;
  if (byte >= 0xe0 && byte <= 0xef) return 2;
  if (byte >= 0xf0 && byte <= 0xf4) return 3;
  return -1;
}

/** Control bytes no text line holds (tab, LF, VT, FF, CR and ESC may appear in text). */
function binaryByte(byte: number): boolean {
  return byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0b && byte !== 0x0c && byte !== 0x0d && byte !== 0x1b;
}

function binaryError(detail: string): CsvFormatError {
  return new CsvFormatError(`The file is binary, not a CSV (${detail}): a spreadsheet or compressed file?`, 1,
    'Save it as CSV (UTF-8) from the spreadsheet, and give that file.');
}

/** The first line of the first chunk, checked for bytes a CSV header never has. */
function firstLineProblem(chunk: Buffer): CsvFormatError | undefined {
  const end = chunk.indexOf(0x0a);
  const line = end < 0 ? chunk : chunk.subarray(0, end);
  const at = line.findIndex(binaryByte);
  return at < 0 ? undefined : binaryError(`byte 0x${line[at]!.toString(16).padStart(2, '0')} at offset ${at} of its first line`);
}

class Utf8Check extends Transform {
  private offset = 0;
  private sawNul = false;
  private line = 1;
  private pending = 0;
  /** Where the character being read started: the byte to blame when it turns out broken. */
  private start = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.offset === 0) {
      const binary = firstLineProblem(chunk);
      if (binary) return callback(binary);
    }
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0) this.sawNul = true;
      if (this.pending > 0) {
        if ((byte & 0xc0) !== 0x80) return callback(this.invalid(this.start));
        this.pending -= 1;
        continue;
      }
      if (byte === 0x0a) this.line += 1;
      const needed = continuations(byte);
      if (needed < 0) return callback(this.invalid(this.offset + i));
      this.pending = needed;
      this.start = this.offset + i;
    }
    this.offset += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.pending > 0 ? this.invalid(this.start) : null);
  }

  private invalid(at: number): CsvFormatError {
    if (this.sawNul) return binaryError(`NUL bytes, then a byte that is not UTF-8 at offset ${at}`);
    return new CsvFormatError(
      `Line ${this.line} is not valid UTF-8 (byte offset ${at}): the file was probably saved as Latin-1 or Windows-1252.`,
      this.line,
      'Give --encoding latin1, or save the file as UTF-8.',
    );
  }
}

class Latin1ToUtf8 extends Transform {
  private first = true;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.first) {
      this.first = false;
      const binary = firstLineProblem(chunk);
      if (binary) return callback(binary);
    }
    // Latin-1 maps each byte to one code point, so chunks can be converted independently.
    callback(null, Buffer.from(chunk.toString('latin1'), 'utf8'));
  }
}

export function decoderFor(encoding: InputEncoding): Transform {
  return encoding === 'latin1' ? new Latin1ToUtf8() : new Utf8Check();
}
