// `ferry serve --secret-key-file` (run in this process): a token sealed under the file's key is
// synced after a restart with the same file (the worker thread opens it), no secret.key is
// written into the data dir, a loose file is warned about once, and the refusals (the file
// and FERRY_SECRET_KEY disagreeing, a data dir whose secret.key differs, a malformed or
// missing file) are one line naming the source, with no key in any output.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ferry, type InProcessResult } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { linkedCompany, readAll, waitFor } from '../helpers/sync.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
/** Every form a key could leak in: none may appear in any output. */
const keyTexts = [keyA, keyB].flatMap((key) => [key.toString('hex'), key.toString('base64')]);

describe('ferry serve --secret-key-file', () => {
  const dir = tempDir('ferry-secret-key-');
  const outputs: Array<{ stdout: string; stderr: string }> = [];
  let serve: ServeHandle | undefined;
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const keyFile = (name: string, text: string, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };
  const serveOnce = async (dataDir: string, args: string[], env: Record<string, string> = {}) => {
    const result = await ferry(['serve', '--port', '0', '--data-dir', dataDir, ...args], { env });
    outputs.push(result);
    return result;
  };
  /** The refusal is one `error:` line on stderr, nothing on stdout. */
  const refusal = (result: InProcessResult, code: number) => {
    expect(result.code, result.stderr).toBe(code);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    return lines[0]!;
  };

  const fileA = keyFile('a.key', `  ${keyA.toString('hex')}\n\n`, 0o640);

  it('a token authorized under the file is synced after a restart with it; no secret.key in the data dir', async () => {
    const dataDir = join(dir, 'data');
    serve = await startTestStack('serve', { dataDir, args: ['--secret-key-file', fileA] });
    const linked = await linkedCompany(serve.api, serve.sandboxUrl, 'gbol', 3, { seed: 21 });
    let stopped = await serve.stop('SIGTERM');
    serve = undefined;
    outputs.push(stopped);
    expect(stopped.code).toBe(0);
    // A file others may read is used, and said so once (as ssh does).
    expect(stopped.stderr.match(/secret key file .* is accessible by group or others \(mode 0640\)/g)).toHaveLength(1);
    expect(stopped.stderr).toContain(fileA);
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(false);

    // The same key again, here also in FERRY_SECRET_KEY (as base64): they agree, so it starts.
    keyFile('a.key', `${keyA.toString('hex')}\n`);
    serve = await startTestStack('serve', { dataDir, args: ['--secret-key-file', fileA], env: { FERRY_SECRET_KEY: keyA.toString('base64') } });
    const queued = await serve.api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    // The pull runs in the worker thread, which opens the sealed tokens with the file's key.
    const status = await waitFor('the invoices pull to finish', async () => {
      const s = (await serve!.api.call('GET', `/companies/${linked.companyId}/dataStatus`)).body?.invoices?.currentStatus;
      return s === 'Complete' || s?.includes('Error') ? s : undefined;
    }, 30_000);
    expect(status).toBe('Complete');
    expect(await readAll(serve.api, linked.companyId, 'invoices')).toHaveLength(3);
    stopped = await serve.stop('SIGTERM');
    serve = undefined;
    outputs.push(stopped);
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).not.toContain('accessible by group or others');
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(false);
  });

  it('refuses a key file whose key differs from the data dir\'s secret.key, naming it and the way out', async () => {
    const dataDir = join(dir, 'keyed');
    mkdirSync(dataDir, { mode: 0o700 });
    const own = join(dataDir, 'secret.key');
    writeFileSync(own, `${keyB.toString('hex')}\n`, { mode: 0o600 });
    const line = refusal(await serveOnce(dataDir, ['--secret-key-file', fileA]), 1);
    expect(line).toMatch(/^error: /);
    expect(line).toContain(`${own} holds a different key than --secret-key-file ${fileA}`);
    expect(line).toContain(`Give --secret-key-file ${own}`);
    // Refused before anything opened: no database, no admin key.
    expect(existsSync(join(dataDir, 'ferry.db'))).toBe(false);
    expect(existsSync(join(dataDir, 'admin.key'))).toBe(false);
    expect(readFileSync(own, 'utf8')).toBe(`${keyB.toString('hex')}\n`);
  });

  it('refuses the file and FERRY_SECRET_KEY holding different keys (exit 2, both named)', async () => {
    const line = refusal(await serveOnce(join(dir, 'conflict'), ['--secret-key-file', fileA], { FERRY_SECRET_KEY: keyB.toString('hex') }), 2);
    expect(line).toBe(`error: --secret-key-file ${fileA} and FERRY_SECRET_KEY hold different keys; give one of them, or the same key in both.`);
  });

  it('refuses a malformed file, naming it and the format, never its content', async () => {
    const dataDir = join(dir, 'malformed');
    for (const text of ['not a key at all\n', `${keyB.toString('hex').slice(0, 32)}\n`, '']) {
      const bad = keyFile('bad.key', text);
      const line = refusal(await serveOnce(dataDir, ['--secret-key-file', bad]), 1);
      expect(line).toBe(`error: the secret key file ${bad} does not hold a usable key: it must be 32 bytes, as 64 hex characters or base64 (surrounding whitespace is ignored).`);
      if (text.trim()) expect(line).not.toContain(text.trim());
    }
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(false);
  });

  it('refuses a missing file', async () => {
    const missing = join(dir, 'nowhere.key');
    const line = refusal(await serveOnce(join(dir, 'missing'), ['--secret-key-file', missing]), 1);
    expect(line).toBe(`error: cannot read the secret key file ${missing}: no such file.`);
  });

  it('printed no key material anywhere', () => {
    expect(outputs.length).toBeGreaterThanOrEqual(7);
    for (const { stdout, stderr } of outputs) {
      for (const text of keyTexts) {
        expect(stdout).not.toContain(text);
        expect(stderr).not.toContain(text);
      }
    }
  });
});
