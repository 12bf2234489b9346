// `ferry --help` must not load the service, the HTTP client or the heavy packages
// (fastify, undici, csv, ora, inquirer …): command files import them lazily. Runs the
// module check of bench/startup.mjs against dist/ (build first: node scripts/build.mjs).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('ferry --help start-up', () => {
  it('loads no heavy module (the bench names the file that imports one)', () => {
    const result = spawnSync(process.execPath, [join(root, 'bench', 'startup.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
    expect(result.stdout).toContain('no heavy modules on the --help path');
    expect(result.status).toBe(0);
  });
});
