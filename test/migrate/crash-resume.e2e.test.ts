// Crash-only migration: a `ferry migrate tokens` child killed with SIGKILL at random
// points (seeded; the seed is in every assertion message, FERRY_TEST_SEED replays it),
// rerun each time with the same command, then let finish: every row is migrated exactly
// once, in the results once, and nothing is lost. Ctrl-C: the first one lets in-flight
// rows finish (exit 130, results written, resumable), a second one exits at once.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { waitFor } from '../helpers/sync.js';
import {
  byRow, countBy, expectMigratedOnce, extKeys, leakedSecrets, makeTenants, readResults, secretsOf, seededRandom, spawnFerry, stopCleanly, testSeed,
  tokensCsv, writeCsv, type FerryChild,
} from './support.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

let stack: ServeProcess | undefined;

afterEach(async () => {
  await stopCleanly(stack);
  stack = undefined;
});

const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0);

interface JournalLine {
  type: string;
  row?: number;
}

function journalEvents(path: string): JournalLine[] {
  return readFileSync(path, 'utf8').split('\n').filter((line) => line.trim() !== '').flatMap((line) => {
    try {
      return [JSON.parse(line) as JournalLine];
    } catch {
      return []; // a line cut short by a kill (the engine skips it too)
    }
  });
}

/** Waits until the child has exited or `ready()` holds; returns whether it is still running. */
async function until(child: FerryChild, ready: () => boolean, what: string): Promise<boolean> {
  let exited = false;
  void child.done.then(() => (exited = true));
  await waitFor(what, async () => exited || ready(), 60_000, 2);
  return !exited;
}

describe('migrate tokens: kill -9 and resume', () => {
  it('SIGKILL at random points, rerun each time: every row migrated exactly once, none lost', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const replay = `seed ${seed} (FERRY_TEST_SEED=${seed} replays the kill schedule)`;
    stack = await startTestStack('process');
    const tenants = await makeTenants(stack.sandboxUrl, 300, { seed: 2000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    const results = `${input}.results.csv`;
    const journal = `${results}.journal`;
    const args = [...stack.target(), 'migrate', 'tokens', input, '--yes', '--concurrency', '8'];

    const kills: string[] = [];
    for (let round = 0; round < 5; round += 1) {
      const child = spawnFerry(args);
      let point: string;
      let running: boolean;
      if (round === 0) {
        // Somewhere in start-up or the validation pass: before the journal exists, or just
        // after (at the latest once its first rows are written: 300 rows can finish in a second).
        const delayMs = Math.floor(random() * 1500);
        point = `${delayMs} ms after start`;
        const at = Date.now() + delayMs;
        running = await until(child, () => Date.now() >= at || sizeOf(journal) > 0, point);
      } else {
        // Once the journal has grown by a random number of bytes (one row is ~700).
        const grow = 1 + Math.floor(random() * 40_000);
        const target = sizeOf(journal) + grow;
        point = `journal +${grow} bytes`;
        running = await until(child, () => sizeOf(journal) >= target, point);
      }
      if (!running) {
        kills.push(`${point}: finished first`);
        break;
      }
      child.child.kill('SIGKILL');
      const killed = await child.done;
      expect(killed.signal, `${replay}; ${kills.join(', ')}`).toBe('SIGKILL');
      kills.push(`${point}: journal at ${sizeOf(journal)} bytes`);
    }
    const context = `${replay}; kills: ${kills.join(', ')}`;
    expect(kills.filter((k) => !k.endsWith('finished first')).length, context).toBeGreaterThanOrEqual(3);

    const last = await runFerry(args, { timeoutMs: 90_000 });
    expect(last.code, `${context}\n${last.stderr}`).toBe(0);

    // The service: one company per row, one Linked connection each, a sync queued for each.
    const companies = await expectMigratedOnce(stack.api, extKeys(tenants), { context });
    for (const company of companies.values()) {
      const status = await stack.api.call('GET', `/companies/${company.id}/dataStatus`);
      expect(Object.keys(status.body).length, `${context}: no sync queued for ${company.tags.ferryKey}`).toBeGreaterThan(0);
    }

    // The results: every row once, migrated (a resumed row is still migrated: its sync was queued by this journal).
    const rows = byRow(readResults(results));
    expect(rows.size, context).toBe(tenants.length);
    tenants.forEach((tenant, i) => {
      const row = rows.get(i + 2);
      expect(row, `${context}: row ${i + 2}`).toMatchObject({ externalId: tenant.id, status: 'migrated', error: '' });
      const company = companies.get(`ext:${tenant.id}`);
      expect(row!.companyId, context).toBe(company.id);
      expect(row!.connectionId, context).toBe(company.dataConnections[0].id);
    });

    // The journal: each row finished exactly once across all the runs.
    const events = journalEvents(journal);
    const done = countBy(events.filter((e) => e.type === 'done'), (e) => String(e.row));
    expect(Object.values(done).every((n) => n === 1), context).toBe(true);
    expect(Object.keys(done).length, context).toBe(tenants.length);
    expect(leakedSecrets(readFileSync(journal, 'utf8') + readFileSync(results, 'utf8') + last.stderr, secretsOf(tenants)), context).toEqual([]);
  }, 150_000);

  it('Ctrl-C: in-flight rows finish, exit 130, results written; the rerun resumes; a second Ctrl-C exits at once', async () => {
    stack = await startTestStack('process');
    const tenants = await makeTenants(stack.sandboxUrl, 200, { seed: 3000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    const results = `${input}.results.csv`;
    const journal = `${results}.journal`;
    const args = [...stack.target(), 'migrate', 'tokens', input, '--yes'];

    const child = spawnFerry(args);
    expect(await until(child, () => sizeOf(journal) >= 8_000, 'the first rows in the journal')).toBe(true);
    child.child.kill('SIGINT');
    const interrupted = await child.done;
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stderr).toContain('\nStopped (the rows in flight finished); rerun the same command to resume.');
    expect(interrupted.stderr).not.toContain('error:');
    expect(interrupted.stderr).toContain(`Next: ferry ${stack.target().join(' ')} migrate tokens ${input} --yes   # resumes`);

    // Every row it started, it finished: no company without its row done.
    const events = journalEvents(journal);
    const started = new Set(events.filter((e) => e.type === 'company').map((e) => e.row));
    const finished = new Set(events.filter((e) => e.type === 'done').map((e) => e.row));
    expect([...started].filter((row) => !finished.has(row))).toEqual([]);
    const partial = byRow(readResults(results));
    expect(partial.size).toBe(finished.size);
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(tenants.length);
    expect([...partial.values()].every((r) => r.status === 'migrated')).toBe(true);

    // A second Ctrl-C does not wait for in-flight rows.
    const impatient = spawnFerry(args);
    const grown = sizeOf(journal) + 4_000;
    expect(await until(impatient, () => sizeOf(journal) >= grown, 'more rows in the journal')).toBe(true);
    impatient.child.kill('SIGINT');
    impatient.child.kill('SIGINT');
    expect((await impatient.done).code).toBe(130);

    const rerun = await runFerry(args, { timeoutMs: 60_000 });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('Resuming from');
    expect(rerun.stderr).toMatch(/[\d,]+ done by earlier runs/);
    const rows = byRow(readResults(results));
    expect(rows.size).toBe(tenants.length);
    expect([...rows.values()].every((r) => r.status === 'migrated')).toBe(true);
    await expectMigratedOnce(stack.api, extKeys(tenants));
  }, 120_000);
});
