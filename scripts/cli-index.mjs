// Rewrites the command index of docs/cli.md from ferry's command registry: one line per
// command, linking to the section that covers it. Needs a build first (npm run build).
// test/cli/docs-index.test.ts fails when the index is stale or a command has no section.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withCommandIndex } from '../dist/cli/command-index.js';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'cli.md');
writeFileSync(file, withCommandIndex(readFileSync(file, 'utf8')));
process.stdout.write('rewrote the command index of docs/cli.md\n');
