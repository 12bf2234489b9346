// Statements per request of a migrated row's four API calls, on each store (bench/lib/row-statements.mjs).
// Usage: npm run build && node bench/row-statements.mjs [--store=sqlite|postgres|both] [--rows=100]
import { STORE_NAMES, distDir, option, startSandboxProcess, storesOption } from './lib.mjs';
import { countRowStatements, describeRowStatements } from './lib/row-statements.mjs';

const rows = option('rows', 100);
const sandbox = await startSandboxProcess();
try {
  for (const store of storesOption()) {
    const counts = await countRowStatements({ distDir, store, rows, sandbox });
    for (const line of describeRowStatements(STORE_NAMES[store], counts)) console.log(line);
    if (process.argv.includes('--texts')) {
      const top = Object.entries(counts.texts).sort((a, b) => b[1] - a[1]).slice(0, 40);
      for (const [text, n] of top) console.log(`   ${String(n).padStart(6)}  ${text}`);
    }
  }
} finally {
  await sandbox.stop();
}
