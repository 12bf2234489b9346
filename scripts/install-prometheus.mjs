// Installs Debian's Prometheus (the server and promtool) for the monitoring test
// (test/service/prometheus.e2e.test.ts runs this before it starts). Quiet when both are
// already there. Prints the two paths on stdout, one a line (prometheus, then promtool);
// messages go to stderr. FERRY_PROMETHEUS_DIR names another directory holding both
// binaries. Exit codes: 0 installed or already there, 1 the install failed, 2 apt-get is
// not to be had here (no apt-get, or neither root nor sudo): the test skips there, except
// on CI, where it fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const DIR = process.env.FERRY_PROMETHEUS_DIR || '/usr/bin';
const BINARIES = ['prometheus', 'promtool'].map((name) => join(DIR, name));

function say(text) {
  process.stderr.write(`install-prometheus: ${text}\n`);
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Runs apt-get as root: directly when root, through sudo otherwise. */
function aptGet(args) {
  const asRoot = process.getuid?.() === 0;
  // The lock timeout: another install (a second test run, unattended upgrades) may hold it.
  const full = ['apt-get', '-o', 'DPkg::Lock::Timeout=300', '-qq', ...args];
  const run = spawnSync(asRoot ? full[0] : 'sudo', asRoot ? full.slice(1) : ['-n', ...full], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status ?? 1, output: `${run.stdout ?? ''}${run.stderr ?? ''}${run.error ? String(run.error) : ''}` };
}

const missing = () => BINARIES.filter((path) => !existsSync(path));

function main() {
  if (missing().length === 0) {
    process.stdout.write(`${BINARIES.join('\n')}\n`);
    return 0;
  }
  if (process.env.FERRY_PROMETHEUS_DIR) {
    say(`FERRY_PROMETHEUS_DIR names ${DIR}, which lacks ${missing().join(' and ')}: point it at a directory with both, or unset it to install Debian's.`);
    return 1;
  }
  const canRoot = process.getuid?.() === 0 || onPath('sudo');
  if (!onPath('apt-get') || !canRoot) {
    say(`${missing().join(' and ')} missing and ${onPath('apt-get') ? 'apt-get cannot run as root here (not root, no sudo)' : 'this machine has no apt-get'} to install them: install Prometheus and set FERRY_PROMETHEUS_DIR to the directory of prometheus and promtool.`);
    return 2;
  }
  // Without its recommended node exporter: the test scrapes ferry, not the machine. The
  // package's service is not needed either (the test starts its own server); where an init
  // system runs, stopping it is the operator's call, so it is left as installed.
  say('installing Debian\'s prometheus package with apt-get (a minute or two)...');
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'prometheus']]) {
    const run = aptGet(args);
    if (run.status !== 0) {
      // apt's own words say why (no network, a held lock, no space): the tail is enough.
      say(`apt-get ${args[0]} failed (exit ${run.status}):\n${run.output.trim().split('\n').slice(-15).join('\n')}`);
      return 1;
    }
  }
  if (missing().length > 0) {
    say(`apt-get installed prometheus, but ${missing().join(' and ')} is still missing.`);
    return 1;
  }
  say(`installed ${BINARIES.join(' and ')}`);
  process.stdout.write(`${BINARIES.join('\n')}\n`);
  return 0;
}

process.exitCode = main();
