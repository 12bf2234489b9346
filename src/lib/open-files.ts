// How many files (sockets included) this process may hold open: the soft limit, as Linux
// shows it in /proc/self/limits. Node raises the soft limit to the hard one at start, so
// this is what the process really has. Elsewhere, or when unlimited, it is unknown.
import { readFileSync } from 'node:fs';

export function openFileLimit(readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  let text: string;
  try {
    text = readLimits();
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}
