// docs/cli.md covers every command ferry has: its index, generated from the command
// registry (npm run build && npm run cli-index), is current, and each command has a section.
// The docs point at nothing outside the repository. package.json lets the one dependency
// with an install script run it, so npm install does not warn about it.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandLines, sectionOf, withCommandIndex } from '../../src/cli/command-index.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/cli.md', () => {
  const docs = read('docs/cli.md');

  it('has a section for every command', () => {
    const lines = commandLines();
    expect(lines.length).toBeGreaterThan(50);
    expect(lines.filter(({ name }) => sectionOf(docs, name) === undefined).map(({ name }) => name)).toEqual([]);
  });

  it('has the index the registry makes (regenerate it with npm run cli-index)', () => {
    expect(docs).toBe(withCommandIndex(docs));
    for (const { name } of commandLines()) expect(docs).toContain(`- [\`ferry ${name}\`](#`);
  });

  it('and the README, and every other doc, point at nothing outside the repository', () => {
    const others = readdirSync(new URL('../../docs/', import.meta.url)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    for (const path of ['README.md', ...others]) expect(read(path), path).not.toMatch(/\/work\/|\.\.\/shared\//);
  });
});

describe('package.json', () => {
  it('allows the install script of every package in the lockfile that has one', () => {
    const pkg = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(withScripts).toContain('better-sqlite3');
    for (const name of withScripts) expect(pkg.allowScripts?.[name], name).toBe(true);
  });
});
