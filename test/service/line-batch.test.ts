// The log's batch (line-batch.ts) gathers lines and hands them on as one write: the bytes
// that reach the file must be the lines' own, in order, across batch boundaries, for
// characters of one to four bytes, a lone surrogate, and lines longer than a batch.
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_BATCH_BYTES, LineBatch } from '../../src/service/observability/line-batch.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function batchToFile() {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-line-batch-'));
  dirs.push(dir);
  const file = join(dir, 'log');
  const fd = openSync(file, 'w');
  const out = pino.destination({ dest: fd, sync: false });
  return { batch: new LineBatch(out, fd), read: () => readFileSync(file) };
}

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('the log\'s line batch', () => {
  it('writes every line\'s bytes in order, across batches, whatever the characters and the length', async () => {
    const { batch, read } = batchToFile();
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const kinds = [`{"n":${i},"path":"/companies"}\n`, `{"n":${i},"path":"/é/€/😀"}\n`, `{"n":${i},"odd":"\ud800"}\n`];
      lines.push(kinds[i % kinds.length]!);
    }
    lines.splice(1500, 0, `{"long":"${'é'.repeat(LOG_BATCH_BYTES)}"}\n`, `{"long":"${'x'.repeat(LOG_BATCH_BYTES * 2)}"}\n`);
    for (const line of lines) batch.write(line);
    const expected = Buffer.from(lines.join(''), 'utf8');
    // The last batch goes at the end of its wait; the others as they filled, one write at a time.
    await until(() => read().length >= expected.length);
    expect(expected.length).toBeGreaterThan(LOG_BATCH_BYTES * 3);
    expect(read().equals(expected)).toBe(true);
  });

  it('writes a lone line once its wait is over, without a flush', async () => {
    const { batch, read } = batchToFile();
    batch.write('{"lone":true}\n');
    await until(() => read().length > 0);
    expect(read().toString('utf8')).toBe('{"lone":true}\n');
  });
});
