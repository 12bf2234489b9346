// The in-process runner itself, and the behaviour every command shares: usage errors exit
// 2 with a suggestion, --version, --json errors on stderr, no prompt without a terminal.
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';

describe('shared CLI behaviour', () => {
  it('--version prints the package version', async () => {
    const result = await ferry(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('suggests the command meant by a typo and exits 2', async () => {
    const result = await ferry(['admin', 'clients', 'lsit']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Did you mean list?');
  });

  it('a missing required option is a usage error naming it', async () => {
    const result = await ferry(['admin', 'clients', 'create', '--plan', 'Free']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--name');
  });

  it('errors are JSON on stderr with --json, and exit codes map from the status', async () => {
    const dataDir = tempDir();
    const result = await ferry(['--json', '--data-dir', dataDir, 'admin', 'keys', 'create', 'no-such-client']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { status: 404, exitCode: 1, message: 'Client no-such-client not found.' } });
  });

  it('never prompts without a terminal: login names the flag it needs', async () => {
    const result = await ferry(['login'], { env: { XDG_CONFIG_HOME: tempDir() } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Missing --base-url');
  });
});
