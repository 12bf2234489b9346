// `ferry sync --wait` stopped by its timeout and run again: the printed command resumes the
// run from its journal, waits for what is still queued or running and queues nothing again
// for a company that completed since the run began; a results file's time counts the same
// way; --force queues anew; the timeout's report is short at any count (one JSON line with
// --json). On the real stack (startStack: the worker thread syncs as it does for users).
import { appendFileSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOURNAL_SUFFIX, runFiles, syncStateDir, targetOf } from '../../src/cli/sync/run-files.js';
import { resumeCommand, shellWord } from '../../src/cli/sync/resume-command.js';
import { defaultSyncTimeoutMs } from '../../src/cli/sync/timeout.js';
import type { Stack } from '../../src/stack.js';
import { scratchStateHome } from '../helpers/cli.js';
import { ferry, type InProcessResult } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { linkedCompany, patchSandbox, waitFor, type Api } from '../helpers/sync.js';
import { startClientStack, stopClientStack } from './client-stack-support.js';

const PLATFORM = 'gbol';

/** The command a stopped run printed to resume it, as the words to run (the paths here need no quoting). */
function printedResume(result: InProcessResult): string[] {
  const line = /Resume the wait with: (ferry .+)$/m.exec(result.stderr)?.[1];
  expect(line, result.stderr).toBeDefined();
  expect(line).not.toMatch(/['"\\]/);
  const [ferryWord, ...args] = line!.split(' ');
  expect(ferryWord).toBe('ferry');
  return args;
}

describe('sync --wait resumed after a stop (real worker)', () => {
  const dataDir = tempDir('ferry-sync-resume-');
  const work = tempDir('ferry-sync-resume-work-');
  let stack: Stack;
  let api: Api;
  let remote: string[];

  async function pulls(companyId: string): Promise<Array<{ dataType: string; status: string }>> {
    return (await api.call('GET', `/companies/${companyId}/data/history?pageSize=500`)).body.results;
  }
  const allComplete = async (companyId: string, count: number) => {
    const list = await pulls(companyId);
    return list.length === count && list.every((p) => p.status === 'Complete');
  };

  beforeAll(async () => {
    ({ stack, api, remote } = await startClientStack('Resume Ltd', dataDir, work));
  });
  afterAll(() => stopClientStack(stack, dataDir, work));

  it('a timeout prints counts per state and the command that resumes; the rerun queues nothing again and ends once all is complete', async () => {
    const a = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Resume A', seed: 71 });
    // Five pages of invoices, each answered slowly: still running when A is done.
    const b = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5000, { name: 'Resume B', seed: 72 });
    await patchSandbox(stack.sandboxUrl, { latencyMs: 300 });
    try {
      const first = await ferry([...remote, 'sync', a.companyId, b.companyId, '--data-type', 'invoices', '--wait', '--timeout', '1ms', '--poll-ms', '50']);
      expect(first.code, first.stderr).toBe(1);
      expect(first.stderr).toMatch(/^error: Timed out after 1ms waiting for syncs: 0 complete, \d running, \d queued, 0 failed; still running: /m);
      const resume = printedResume(first);
      expect(resume).toEqual([...remote, 'sync', a.companyId, b.companyId, '--data-type', 'invoices', '--wait', '--timeout', '1ms', '--poll-ms', '50']);
      // The journal of the run (companies given by id: in the state dir).
      const env = { XDG_STATE_HOME: scratchStateHome() };
      const { journal } = runFiles({ companyIds: [a.companyId, b.companyId], dataType: 'invoices', target: targetOf({ embedded: false, baseUrl: stack.baseUrl }) }, env);
      expect(journal.startsWith(syncStateDir(env))).toBe(true);
      expect(readFileSync(journal, 'utf8')).toMatch(/^\{"type":"start",/);

      await waitFor('A synced', () => allComplete(a.companyId, 1), 30_000);
      const second = await ferry(resume);
      // B may have finished by now (exit 0); if not, the rerun times out again, having queued nothing.
      if (second.code === 1) expect(second.stderr).toMatch(/Timed out after 1ms waiting for syncs: 1 complete, [01] running, [01] queued, 0 failed/);
      else expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toContain('Resuming the sync run started at');
      expect(second.stderr).toMatch(/resuming: [01] of 2 companies still to finish; [12] already complete \([01] already queued or running, 0 queued now\)/);
      // Nothing was queued again: one invoices pull each.
      expect(await pulls(a.companyId)).toHaveLength(1);
      expect(await pulls(b.companyId)).toHaveLength(1);

      await patchSandbox(stack.sandboxUrl, { latencyMs: 0 });
      await waitFor('B synced', () => allComplete(b.companyId, 1), 60_000);
      const third = await ferry(resume);
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).toContain('resuming: 0 of 2 companies still to finish; 2 already complete (0 already queued or running, 0 queued now). --force queues them again.');
      expect(third.stdout).toBe(`${a.companyId}\tResume A\tcomplete\t1\t1\t\n${b.companyId}\tResume B\tcomplete\t1\t1\t\n`);
      expect(await pulls(a.companyId)).toHaveLength(1);
      expect(await pulls(b.companyId)).toHaveLength(1);
      // The run reached its end: its journal is gone, and the same command is a new run.
      expect(existsSync(journal)).toBe(false);
      const again = await ferry([...remote, 'sync', a.companyId, b.companyId, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('resuming');
      expect(await pulls(a.companyId)).toHaveLength(2);
    } finally {
      await patchSandbox(stack.sandboxUrl, { latencyMs: 0 });
    }
  });

  it('--force queues anew for every company, whatever the journal says', async () => {
    const c = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Forced C', seed: 73 });
    const first = await ferry([...remote, 'sync', c.companyId, '--data-type', 'bills', '--wait', '--timeout', '1ms', '--poll-ms', '50']);
    expect(first.code).toBe(1);
    await waitFor('C synced', () => allComplete(c.companyId, 1), 30_000);
    const forced = await ferry([...printedResume(first).filter((w) => w !== '1ms' && w !== '--timeout'), '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).not.toContain('resuming');
    expect((await pulls(c.companyId)).map((p) => p.status)).toEqual(['Complete', 'Complete']);
  });

  it('--from-results: companies read since the file was written are done, those read before are queued again', async () => {
    const fresh = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Synced Since', seed: 74 });
    const stale = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Synced Before', seed: 75 });
    const lastRead = async (companyId: string) => Date.parse((await api.call('GET', `/companies/${companyId}/dataStatus`)).body.invoices.lastSuccessfulSync);
    const sync = (companyId: string) => ferry([...remote, 'sync', companyId, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect((await sync(stale.companyId)).code).toBe(0);
    const staleAt = await lastRead(stale.companyId);
    // The service keeps whole seconds, and its Date header (whole seconds too) moves the
    // file's time back by up to one, the comparison to the second by up to another: the
    // file is two clear seconds after the first sync, and the second sync a second after it.
    await waitFor('three clear seconds after the first sync', async () => Date.now() > staleAt + 3100, 6000, 20);
    expect((await sync(fresh.companyId)).code).toBe(0);
    expect(await lastRead(fresh.companyId)).toBeGreaterThanOrEqual(staleAt + 3000);
    const file = join(work, 'tokens.results.csv');
    writeFileSync(file, `row,companyId,status\n2,${fresh.companyId},migrated\n3,${stale.companyId},migrated\n`);
    utimesSync(file, new Date(staleAt + 2001), new Date(staleAt + 2001));

    const run = await ferry([...remote, 'sync', '--from-results', file, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`1 of 2 companies still to finish; 1 already complete (read since ${file} was begun) (0 already queued or running, 1 queued now). --force queues them again.`);
    expect(await pulls(fresh.companyId)).toHaveLength(1);
    expect(await pulls(stale.companyId)).toHaveLength(2);
    expect(existsSync(`${file}${JOURNAL_SUFFIX}`)).toBe(false);

    const forced = await ferry([...remote, 'sync', '--from-results', file, '--data-type', 'invoices', '--wait', '--force', '--timeout', '60s', '--poll-ms', '50']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await pulls(fresh.companyId)).toHaveLength(2);
    expect(await pulls(stale.companyId)).toHaveLength(3);
  });

  it('--from-results: a company migrated early whose sync ended before the file was finished is done, not queued again', async () => {
    const early = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Migrated Early', seed: 77 });
    // The results file is begun when its migration begins, and finished (last changed) when it ends.
    const file = join(work, 'early.results.csv');
    writeFileSync(file, 'row,companyId,status\n');
    const begun = statSync(file).birthtimeMs;
    expect(begun, 'this file system keeps creation times').toBeGreaterThan(0);
    await waitFor('a clear second after the file was begun', async () => Date.now() > begun + 1100, 5000, 20);
    const synced = await ferry([...remote, 'sync', early.companyId, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(synced.code, synced.stderr).toBe(0);
    appendFileSync(file, `2,${early.companyId},migrated\n`);

    const run = await ferry([...remote, 'sync', '--from-results', file, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`0 of 1 company still to finish; 1 already complete (read since ${file} was begun)`);
    expect(await pulls(early.companyId)).toHaveLength(1);
  });

  it('--from-results: the migration\'s journal says when it began, so a results file rewritten at its end does not requeue what synced meanwhile', async () => {
    const early = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Journalled Early', seed: 78 });
    const file = join(work, 'journalled.results.csv');
    const began = Date.now();
    writeFileSync(`${file}.journal`, `${JSON.stringify({ type: 'start', input: 'tokens.csv', fingerprint: 'f', at: new Date(began - 2000).toISOString() })}\n`);
    const synced = await ferry([...remote, 'sync', early.companyId, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(synced.code, synced.stderr).toBe(0);
    // Written whole at the run's end, as migrate writes it from its journal.
    writeFileSync(file, `row,companyId,status\n2,${early.companyId},migrated\n`);

    const run = await ferry([...remote, 'sync', '--from-results', file, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('0 of 1 company still to finish; 1 already complete');
    expect(await pulls(early.companyId)).toHaveLength(1);
  });

  it('--from-results: a sync that ended in the second the migration began, after it began, is done (the service keeps whole seconds)', async () => {
    const same = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Same Second', seed: 79 });
    const synced = await ferry([...remote, 'sync', same.companyId, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(synced.code, synced.stderr).toBe(0);
    const readAt = Date.parse((await api.call('GET', `/companies/${same.companyId}/dataStatus`)).body.invoices.lastSuccessfulSync);
    expect(readAt % 1000).toBe(0);
    // The migration began late in that same second: its read is shown as the second's start, before the journal's millisecond.
    const file = join(work, 'same-second.results.csv');
    writeFileSync(`${file}.journal`, `${JSON.stringify({ type: 'start', input: 'tokens.csv', fingerprint: 'f', at: new Date(readAt + 900).toISOString() })}\n`);
    writeFileSync(file, `row,companyId,status\n2,${same.companyId},migrated\n`);

    const run = await ferry([...remote, 'sync', '--from-results', file, '--data-type', 'invoices', '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('0 of 1 company still to finish; 1 already complete');
    expect(await pulls(same.companyId)).toHaveLength(1);
  });

  it('with --json a timeout is one JSON error line holding the counts and the command that resumes', async () => {
    const d = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 5, { name: 'Json D', seed: 76 });
    const result = await ferry([...remote, '--json', 'sync', d.companyId, '--wait', '--timeout', '1ms', '--poll-ms', '50']);
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const { error } = JSON.parse(lines[0]!);
    expect(error).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^Timed out after 1ms waiting for syncs: 0 complete, /) });
    expect(error.counts.complete + error.counts.running + error.counts.queued + error.counts.failed).toBe(1);
    expect(error.resume).toBe(['ferry', ...remote, '--json', 'sync', d.companyId, '--wait', '--timeout', '1ms', '--poll-ms', '50'].join(' '));
    expect(JSON.parse(result.stdout)[0]).toMatchObject({ companyId: d.companyId, state: 'running' });
  });
});

describe('the command that resumes', () => {
  const flags = { baseUrl: 'http://127.0.0.1:8080', apiKeyFile: '/keys/my key' };
  it('repeats the target, the companies and the flags that shape the wait, quoting what a shell would split', () => {
    expect(resumeCommand(flags, { fromResults: 'tokens.results.csv', timeout: 1_800_000, concurrency: 8, events: false }, [])).toBe(
      "ferry --base-url http://127.0.0.1:8080 --api-key-file '/keys/my key' sync --from-results tokens.results.csv --wait --timeout 30m --concurrency 8 --no-events",
    );
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
  });
  it('puts many companies given by id in a list file, so the line stays short', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    let written: string[] | undefined;
    const line = resumeCommand({}, { timeout: 1500 }, ids, () => {
      written = ids;
      return '/state/ferry/syncs/abc.csv';
    });
    expect(written).toBe(ids);
    expect(line).toBe('ferry sync --from-results /state/ferry/syncs/abc.csv --wait --timeout 1500ms');
    expect(resumeCommand({}, {}, ids.slice(0, 2), () => 'unused')).toBe(`ferry sync ${ids[0]} ${ids[1]} --wait`);
  });
  it('the default timeout grows with the companies: 10m + 0.5s each', () => {
    expect(defaultSyncTimeoutMs(1)).toBe(600_500);
    expect(defaultSyncTimeoutMs(3000)).toBe(2_100_000);
  });
});

