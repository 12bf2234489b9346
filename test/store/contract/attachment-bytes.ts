// Attachment bytes as the store contract's scenarios hand them over and read them back:
// staged in a file of their own, as an upload is (the SQLite store moves it into place,
// PostgreSQL reads it into the row), and read from wherever the store keeps them.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttachmentBody } from '../../../src/service/store/attachments.js';
import { tempDir } from '../../helpers/service.js';

export async function staged(bytes: Buffer): Promise<string> {
  const path = join(tempDir('ferry-staged-'), 'upload');
  await writeFile(path, bytes);
  return path;
}

export async function bodyBytes(body: AttachmentBody | undefined): Promise<Buffer | undefined> {
  if (!body) return undefined;
  return 'bytes' in body ? body.bytes : readFile(body.file);
}
