// Every command line ferry has, read from the command registry (commands/index.ts) as
// commander builds it: the source of docs/cli.md's command index
// (scripts/cli-index.mjs) and of the test that every command has a section there.
import { Command } from 'commander';
import { COMMANDS } from './commands/index.js';

export interface CommandLine {
  /** The words after `ferry`: `migrate tokens`, `sandbox apps callbacks add`. */
  name: string;
  description: string;
}

export function commandLines(): CommandLine[] {
  const program = new Command('ferry');
  const registrar = { action: () => async () => {} };
  for (const register of COMMANDS) register(program, registrar);
  const lines: CommandLine[] = [];
  const walk = (command: Command, words: string[]) => {
    for (const sub of command.commands) {
      const path = [...words, sub.name()];
      if (sub.commands.length === 0) lines.push({ name: path.join(' '), description: sub.description() });
      else walk(sub, path);
    }
  };
  walk(program, []);
  return lines;
}

/** The GitHub anchor of a markdown heading: lower case, punctuation dropped, spaces as dashes. */
export function headingAnchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/**
 * The heading of `markdown` naming `ferry NAME` in backticks (`ferry NAME …` counts), or
 * undefined: one that starts with it before one that names it among others.
 */
export function sectionOf(markdown: string, name: string): string | undefined {
  const command = `\`ferry ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\`| [^\`]*\`)`;
  const headings = markdown.split('\n').filter((line) => /^#{2,4} /.test(line)).map((line) => line.replace(/^#+ /, ''));
  return headings.find((h) => new RegExp(`^${command}`).test(h)) ?? headings.find((h) => new RegExp(command).test(h));
}

const START = '<!-- command index: start -->';
const END = '<!-- command index: end -->';

/** docs/cli.md with its command index made anew between the two markers. */
export function withCommandIndex(markdown: string): string {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/cli.md lacks the markers ${START} and ${END}`);
  return `${markdown.slice(0, start + START.length)}\n${commandIndex(markdown)}\n${markdown.slice(end)}`;
}

/** docs/cli.md's command index: one line per command, linking to its section. */
export function commandIndex(markdown: string): string {
  return commandLines().map(({ name, description }) => {
    const section = sectionOf(markdown, name);
    return `- [\`ferry ${name}\`](#${section ? headingAnchor(section) : 'missing-section'}): ${description}`;
  }).join('\n');
}
