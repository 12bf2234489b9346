// Sizes as --attachment-quota takes them and as error messages show them.
import { describe, expect, it } from 'vitest';
import { byteSizeText, parseByteSize } from '../../src/lib/byte-size.js';

describe('parseByteSize', () => {
  it.each([
    ['500MiB', 500 * 1024 ** 2], ['2GiB', 2 * 1024 ** 3], ['2gib', 2 * 1024 ** 3], ['1.5G', 1.5 * 1024 ** 3], ['10MB', 10 * 1024 ** 2],
    ['64k', 64 * 1024], ['5 KB', 5 * 1024], ['1 TiB', 1024 ** 4], ['4096', 4096], ['3b', 3], ['0', 0],
  ])('%s is %i bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it.each(['', 'x', 'GiB', '-1', '1e3', '2 GiBs', '1.2.3M', '99999999999999999999T'])('%j is refused', (text) => {
    expect(parseByteSize(text)).toBeUndefined();
  });
});

describe('byteSizeText', () => {
  it.each([[1024 ** 3, '1 GiB'], [500 * 1024 ** 2, '500 MiB'], [1536, '1.5 KiB'], [100, '100 bytes'], [10 * 1024 ** 2, '10 MiB']])('%i is %s', (bytes, text) => {
    expect(byteSizeText(bytes)).toBe(text);
  });
});
