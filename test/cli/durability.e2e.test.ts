// Crash-only store: kill -9 the server while writes stream in, restart it over the same
// data dir, and every write that was acknowledged before the kill is there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { basic, tempDir } from '../helpers/service.js';
import { startTestStack } from '../helpers/stack.js';

describe('kill -9 during writes', () => {
  it('loses no acknowledged write', async () => {
    const dataDir = tempDir();
    const serve = await startTestStack('process', { dataDir, args: ['--rate-limit', '0'] });
    const auth = basic(readFileSync(join(dataDir, 'admin.key'), 'utf8').trim());
    const acknowledged: string[] = [];
    let stop = false;
    const writer = async () => {
      while (!stop) {
        try {
          const response = await fetch(`${serve.listening.baseUrl}/companies`, {
            method: 'POST',
            headers: { authorization: auth, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Company ${acknowledged.length}` }),
          });
          if (response.status === 200) acknowledged.push(((await response.json()) as { id: string }).id);
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    // Kill once a few hundred writes are in, at whatever instant that is.
    const deadline = Date.now() + 20_000;
    while (acknowledged.length < 300 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const killed = serve.stop('SIGKILL');
    stop = true;
    await Promise.all(writers);
    expect((await killed).signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);

    const again = await startTestStack('process', { dataDir, args: ['--rate-limit', '0'] });
    const ids = new Set<string>();
    let next: string | undefined = '/companies?pageSize=5000';
    while (next) {
      const page = (await (await fetch(`${again.listening.baseUrl}${next}`, { headers: { authorization: auth } })).json()) as {
        results: Array<{ id: string }>; _links: { next?: { href: string } };
      };
      for (const company of page.results) ids.add(company.id);
      next = page._links.next?.href;
    }
    await again.stop();
    const lost = acknowledged.filter((id) => !ids.has(id));
    expect(lost).toEqual([]);
  });
});
