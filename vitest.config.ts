import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { onCi, probePostgres } from './test/helpers/postgres-probe.js';

// Three projects (docs/testing.md):
//   'sqlite'    the fast run, `npm test`: every test file but the heavy ones, in this
//               process wherever the process itself is not under test.
//   'e2e'       the heavy files, named *.e2e.test.ts: the real binary as a child process
//               (signals, kill -9, pipes, terminals, memory, start-up), several processes on
//               one database, large end-to-end scenarios, the browser.
//   'postgres'  the service scenario files (fast and heavy) again, with every service they
//               start on a PostgreSQL database of its own (FERRY_TEST_STORE, read by
//               test/helpers/stack.ts).
// `npm run test:full` runs all three, the fast files first. Where PostgreSQL cannot be
// reached, the postgres project is left out with one line saying why, except on CI, where
// its files fail with the reason.
const HEAVY = 'test/**/*.e2e.test.ts';

// Workers: the fast files mostly wait on sockets and timers, so twice as many workers as
// cores keeps the cores busy (measured on 2 cores: 137 s with 2 workers, 107 s with 4). The
// e2e and postgres files keep vitest's default of one fewer than the cores (one at a time
// on 2 cores), as they always ran: real processes and timing bounds that need the CPU.
const cores = availableParallelism();
const FAST_WORKERS = 2 * cores;
const HEAVY_WORKERS = Math.max(1, cores - 1);

const SCENARIOS = [
  'test/service/**/*.test.ts',
  'test/sync/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/events/**/*.test.ts',
  // The service's event stream and event list, read by the client.
  'test/client/event-stream.test.ts',
  'test/client/wait-for-change.test.ts',
];

/** Scenario files left out of the postgres project, each for its reason. */
const LEFT_OUT = [
  // No service started: pure logic, or stores of their own choosing (both stores, already in 'sqlite').
  'test/sync/leases.test.ts',
  'test/sync/schedule-reads.test.ts',
  'test/webhooks/shared-loop.test.ts',
  'test/webhooks/backoff.test.ts',
  'test/webhooks/target-policy.test.ts',
  'test/service/data-status.test.ts',
  'test/service/signals.test.ts',
  // The modes of ferry.db and its -wal and -shm files in the data dir.
  'test/service/file-modes.test.ts',
  'test/service/file-modes.e2e.test.ts',
  // The reader thread: a second SQLite connection on ferry.db (PostgreSQL reads on its server).
  'test/service/read-pool.test.ts',
  // Record pages over a bare SQLite database, with no service.
  'test/service/record-pages.test.ts',
  // The render pool on its own: no service, no store.
  'test/service/render-pool.test.ts',
  // The shared rate limit on simulated time, with a ledger of its own: no service, no store.
  'test/service/shared-rate-limit.test.ts',
  // A `ferry serve` killed and restarted: on PostgreSQL, where instances share the outbox,
  // the restart waits out the killed one's delivery leases (70 s) before sending again;
  // that takeover is tested on PostgreSQL in test/webhooks/shared-loop.test.ts.
  'test/webhooks/kill.e2e.test.ts',
];

/**
 * One temp dir for the whole run, removed when it ends: TMPDIR, which os.tmpdir() reads, is
 * set before any worker starts, so the workers and every process they start make their temp
 * dirs inside it. Files keep removing what they can; what a worker leaves as it is ended
 * (its exit hooks do not run in the forks pool) goes with the run's.
 */
function runTempDir(): void {
  const run = globalThis as { ferryRunTempDir?: string };
  if (run.ferryRunTempDir) return; // vitest loads its config more than once
  const dir = mkdtempSync(join(tmpdir(), 'ferry-tests-'));
  run.ferryRunTempDir = dir;
  process.env.TMPDIR = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}

export default defineConfig(async () => {
  runTempDir();
  const postgres = onCi ? { ok: true, reason: '' } : await probePostgres();
  // Said once, though vitest loads its config more than once.
  const said = globalThis as { ferryPostgresAbsentSaid?: boolean };
  if (!postgres.ok && !said.ferryPostgresAbsentSaid) {
    said.ferryPostgresAbsentSaid = true;
    process.stderr.write(`${postgres.reason}: the postgres project (the service scenarios on PostgreSQL) is left out; CI fails instead\n`);
  }
  const projects: TestProjectInlineConfiguration[] = [
    // One process per worker for all its files (isolate: false): each file's helpers and the
    // service's modules load once per worker, not once per file, which was most of the
    // run's CPU. Files must leave nothing behind: stop what they start (docs/testing.md).
    { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: [HEAVY], isolate: false, maxWorkers: FAST_WORKERS } },
    // A group of their own (sequence.groupOrder), after the fast files, with their own worker count.
    { extends: true, test: { name: 'e2e', include: [HEAVY], maxWorkers: HEAVY_WORKERS, sequence: { groupOrder: 1 } } },
  ];
  if (postgres.ok) {
    projects.push({
      extends: true,
      test: { name: 'postgres', include: SCENARIOS, exclude: LEFT_OUT, env: { FERRY_TEST_STORE: 'postgres' }, maxWorkers: HEAVY_WORKERS, sequence: { groupOrder: 1 } },
    });
  }
  return { test: { testTimeout: 60_000, hookTimeout: 60_000, pool: 'forks', projects } };
});
