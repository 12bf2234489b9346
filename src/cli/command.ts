// What every command file stands on: the registrar that wraps its run function as a
// commander action, the noun groups (`ferry admin clients …`), and its help's examples.
// program.ts builds the tree from the commands; the commands import only this, so neither
// imports the other.
import type { Command } from 'commander';
import type { CommandContext } from './context.js';

export type Action<O> = (options: O, ctx: CommandContext, args: string[]) => Promise<void>;

export interface Registrar {
  /** Wraps a typed run function as a commander action with IO, flags and a target. */
  action<O>(fn: Action<O>): (...args: unknown[]) => Promise<void>;
}

/** A noun command (`ferry admin clients …`) is a plain group; this finds or makes one. */
export function group(parent: Command, name: string, description: string): Command {
  return parent.commands.find((c) => c.name() === name) ?? parent.command(name).description(description);
}

/** Help text after the options: a few real invocations. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}
