// The real binary (bin/ferry.js → dist/) in a pipeline whose reader goes away, against
// the public API alone (a proxy in front of a `ferry serve` in this process): what main.ts
// does on EPIPE, which only a real process with a real pipe shows.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv } from '../helpers/cli.js';
import { startPublicApiTarget, stopPublicApiTarget, type PublicApiTarget } from './public-api-support.js';

let t: PublicApiTarget | undefined;

beforeAll(async () => {
  t = await startPublicApiTarget();
});
afterAll(() => stopPublicApiTarget(t?.proxy, t?.stack));

describe('a pipeline that stops reading', () => {
  it('`ferry … | head`: ferry stops quietly with exit 0, no stack trace', async () => {
    const child = spawn(process.execPath, [FERRY_BIN, ...t!.target, 'integrations', 'get', 'gbol'], { env: cleanEnv(), stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The reader is gone before ferry writes its first line (it asks the service first).
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(code).toBe(0);
  });
});
