// Import circles in src/, type-only and lazy imports included: import-x/no-cycle
// (eslint.config.js) follows the other imports only, yet a circle of types ties modules
// together all the same. Prints each circle with its imports and exits 1; npm run lint runs it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each module and the modules of src/ it imports ('./x.js' names ./x.ts, as under NodeNext). */
const graph = new Map(sources(join(root, 'src')).map((file) => {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'))
    .filter((target) => target !== file && existsSync(target));
  return [file, [...new Set(targets)]];
}));

// Tarjan's strongly connected components: one of more than one module is a circle.
const circles = [];
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function visit(file) {
  index.set(file, index.size);
  low.set(file, index.get(file));
  stack.push(file);
  onStack.add(file);
  for (const target of graph.get(file) ?? []) {
    if (!index.has(target)) {
      visit(target);
      low.set(file, Math.min(low.get(file), low.get(target)));
    } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
  }
  if (low.get(file) !== index.get(file)) return;
  const members = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    members.push(member);
  } while (member !== file);
  if (members.length > 1) circles.push(members.sort());
}
for (const file of graph.keys()) if (!index.has(file)) visit(file);

if (circles.length > 0) {
  const name = (file) => relative(root, file);
  for (const members of circles) {
    console.error(`import circle of ${members.length} modules:`);
    for (const file of members) {
      for (const target of graph.get(file).filter((t) => members.includes(t))) console.error(`  ${name(file)} → ${name(target)}`);
    }
  }
  console.error('Move what both sides need into a module both import (see docs/architecture.md, "No import circles").');
  process.exit(1);
}
