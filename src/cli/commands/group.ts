// Noun commands (`ferry admin clients …`) are plain groups; this finds or makes one.
import type { Command } from 'commander';

export function group(parent: Command, name: string, description: string): Command {
  return parent.commands.find((c) => c.name() === name) ?? parent.command(name).description(description);
}

/** Help text after the options: a few real invocations. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}
