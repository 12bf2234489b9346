// Compiles src/ into a fresh folder, copies the non-TypeScript assets (SQL migrations)
// beside the compiled code, then swaps it in for dist/, so a ferry process (or a test
// run) using dist/ never sees a half-built tree. With --if-stale (the test scripts) it
// does nothing when dist/ was built from the same inputs: the build's fingerprint, a hash
// of every file under src/, the tsconfig files, this script and the compiler's version,
// is kept in dist/.inputs.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const dist = join(root, 'dist');
const next = join(root, `.dist-${process.pid}`);
const old = join(root, `.dist-old-${process.pid}`);

/** Every file under `dir`, sorted, as paths relative to the root. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [relative(root, path)];
  }).sort();
}

function fingerprint() {
  const hash = createHash('sha256').update(JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version);
  for (const file of [...filesUnder(join(root, 'src')), 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs']) {
    hash.update(`\0${file}\0`).update(readFileSync(join(root, file)));
  }
  return hash.digest('hex');
}

const inputs = fingerprint();
if (process.argv.includes('--if-stale')) {
  let built = '';
  try {
    built = readFileSync(join(dist, '.inputs'), 'utf8');
  } catch {
    // never built, or built before fingerprints
  }
  if (built === inputs) process.exit(0);
}

rmSync(next, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit', cwd: root });
} catch {
  rmSync(next, { recursive: true, force: true });
  process.exit(1);
}

function copyAssets(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (name.endsWith('.sql')) cpSync(path, join(next, relative(join(root, 'src'), path)));
  }
}
copyAssets(join(root, 'src'));
writeFileSync(join(next, '.inputs'), inputs);

try {
  renameSync(dist, old);
} catch {
  // first build: nothing to move aside
}
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
