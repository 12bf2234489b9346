// Compiles src/ into a fresh folder, copies the non-TypeScript assets (SQL migrations)
// beside the compiled code, then swaps it in for dist/, so a ferry process (or a test
// run) using dist/ never sees a half-built tree.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const dist = join(root, 'dist');
const next = join(root, `.dist-${process.pid}`);
const old = join(root, `.dist-old-${process.pid}`);

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

try {
  renameSync(dist, old);
} catch {
  // first build: nothing to move aside
}
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
