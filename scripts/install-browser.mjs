// Installs Debian's Chromium for the browser test of the handover report
// (test/managed/report-browser.test.ts runs this before it starts). Quiet when Chromium is
// already there. Prints the browser's path on stdout; messages go to stderr.
// FERRY_CHROMIUM names another browser binary. Exit codes: 0 installed or already there,
// 1 the install failed, 2 apt-get is not to be had here (no apt-get, or neither root nor
// sudo): the test skips there, except on CI, where it fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.FERRY_CHROMIUM || '/usr/bin/chromium';

function say(text) {
  process.stderr.write(`install-browser: ${text}\n`);
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

function main() {
  if (existsSync(CHROMIUM)) {
    process.stdout.write(`${CHROMIUM}\n`);
    return 0;
  }
  if (process.env.FERRY_CHROMIUM) {
    say(`FERRY_CHROMIUM names ${CHROMIUM}, which does not exist: point it at a Chromium binary, or unset it to install Debian's.`);
    return 1;
  }
  const canRoot = process.getuid?.() === 0 || onPath('sudo');
  if (!onPath('apt-get') || !canRoot) {
    say(`${CHROMIUM} is missing and ${onPath('apt-get') ? 'apt-get cannot run as root here (not root, no sudo)' : 'this machine has no apt-get'} to install it: install Chromium and set FERRY_CHROMIUM to its path.`);
    return 2;
  }
  // Without its recommended packages, so one font is named: text needs a font to be laid out.
  say(`${CHROMIUM} is missing: installing Debian's chromium package with apt-get (a minute or two)...`);
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium', 'fonts-dejavu-core']]) {
    const run = aptGet(args);
    if (run.status !== 0) {
      // apt's own words say why (no network, a held lock, no space): the tail is enough.
      say(`apt-get ${args[0]} failed (exit ${run.status}):\n${run.output.trim().split('\n').slice(-15).join('\n')}`);
      return 1;
    }
  }
  if (!existsSync(CHROMIUM)) {
    say(`apt-get installed chromium, but ${CHROMIUM} is still missing.`);
    return 1;
  }
  say(`installed ${CHROMIUM}`);
  process.stdout.write(`${CHROMIUM}\n`);
  return 0;
}

process.exitCode = main();
