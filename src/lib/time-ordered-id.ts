// Ids that sort by creation time: UUID version 7 (RFC 9562), the time in milliseconds in the
// first 48 bits and 74 random bits after it. A company's id leads every index of its
// records, data sets and pulls; ids made in the order companies are created put each new
// company's entries at the end of those indexes, where the pages are already in memory,
// rather than at a random place in indexes far larger than the database's cache.
import { randomFillSync } from 'node:crypto';
import { uuidText } from './uuid-text.js';

const bytes = Buffer.alloc(16);

export function timeOrderedId(now: number = Date.now()): string {
  randomFillSync(bytes, 6, 10);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return uuidText(bytes.toString('hex'));
}
