// The log on a real process's stderr (a pipe, as a log shipper reads it), which is written
// in batches (line-batch.ts): a lone line is written within the batch's wait, lines past a
// batch's size are written for it, every line is written once the process has exited, in
// order and one JSON object a line, exit() called at once included (while no batch is being
// written: one under way then may be cut short, as with pino's own destination).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import { startTestStack } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';

const LOGGER = new URL('../../dist/service/observability/logger.js', import.meta.url).href;

describe('the log on a process\'s stderr', () => {
  it('has a lone request\'s line within the wait, and every request\'s line in order once `ferry serve` has exited', async () => {
    const serve = await startTestStack('process', { args: ['--log-format', 'json'] });
    const headers = { authorization: basic(serve.adminKey) };
    const ids: string[] = [];
    const call = async (path: string) => {
      const answer = await fetch(`${serve.baseUrl}${path}`, { headers });
      await answer.arrayBuffer();
      ids.push(answer.headers.get('x-correlation-id')!);
    };
    try {
      await call('/companies');
      await waitFor('the lone request\'s line', async () => serve.stderr().includes(ids[0]!), 5000);
      // More than a batch holds (64 KiB).
      for (let i = 0; i < 400; i++) await call(i % 2 ? `/companies?pageSize=${i}` : `/no/such/route/${i}/${'x'.repeat(200)}`);
    } finally {
      const stopped = await serve.stop('SIGTERM');
      expect(stopped.code).toBe(0);
    }
    const lines = serve.stderr().split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((line) => line.event === 'request');
    expect(requests.map((line) => line.correlationId)).toEqual(ids);
    expect(requests[1]).toMatchObject({ status: 404, route: 'unmatched', path: `/no/such/route/0/${'x'.repeat(200)}` });
    expect(lines.at(-1)).toMatchObject({ event: 'stopping' });
  });

  it('writes every line of a process that exits at once', async () => {
    const count = 200;
    const code = `
      const { createLogger } = await import(${JSON.stringify(LOGGER)});
      const logger = createLogger({ format: 'json', level: 'info', stream: process.stderr, name: 'ferry-test' });
      for (let i = 0; i < ${count}; i++) logger.info({ n: i }, 'line ' + i);
      process.exit(0);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'pipe'], cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(exit).toBe(0);
    const numbers = stderr.split('\n').filter((line) => line.length > 0).map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: count }, (_, i) => i));
  });
});
