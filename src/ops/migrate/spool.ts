// stdin can be read once, and a migration reads its input twice (validate, then run):
// keep a private copy (0600: it holds tokens) for the length of the run.
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export async function spoolStdin(stdin: Readable): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'ferry-stdin-')), 'input.csv');
  await pipeline(stdin, createWriteStream(path, { mode: 0o600 }));
  return path;
}
