// The embedded target: the bundled service and its sandbox platforms started in-process
// on 127.0.0.1 over the data dir, used with the data dir's admin key.
import { startStack, type Stack } from '../stack.js';

export type Embedded = Stack;

export function startEmbedded(dataDir: string, onNotice?: (message: string) => void): Promise<Embedded> {
  return startStack({ dataDir, rateLimit: 0, ...(onNotice ? { onNotice } : {}) });
}
