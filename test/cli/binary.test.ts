// The fast run's one test of the binary itself (bin/ferry.js → dist/cli/main.js, which no
// in-process test loads): `ferry templates list|show` from another working directory with
// no service, the shipped CSV files found beside the compiled code, and a usage error's exit
// code. Every other test of a real process is an *.e2e.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { INTEGRATIONS } from '../../src/platforms/registry.js';
import { cleanEnv, FERRY_BIN, runFerry } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

const TEMPLATES = fileURLToPath(new URL('../../templates/migration/', import.meta.url));
const template = (key: string) => readFileSync(join(TEMPLATES, `${key}.csv`), 'utf8');

describe('ferry templates (the binary, from dist/)', () => {
  it('show and list work from another working directory with no service', async () => {
    const cwd = tempDir();
    const run = (args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [FERRY_BIN, ...args], { cwd, env: cleanEnv({ FERRY_DATA_DIR: join(cwd, 'data') }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    const shown = await run(['templates', 'show', 'gbol']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(template('gbol'));
    const listed = await run(['--json', 'templates', 'list']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(INTEGRATIONS.length);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    const unknown = await runFerry(['templates', 'show', 'xero']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('gbol (Xero)');
  });
});
