// The thread side of thread-pool.ts: answers the pool's tasks on this thread's port, one
// at a time, until the pool says 'close'.
import { parentPort, type Transferable } from 'node:worker_threads';
import type { TaskReply, TaskRequest } from './thread-pool.js';

export interface ServeOptions<Result> {
  /** Parts of a result handed over to the pool rather than copied. */
  transfer?(result: Result): Transferable[];
  /** Releases what the thread holds, when the pool closes. */
  close?(): void;
}

export function serveTasks<Task, Result>(handle: (task: Task) => Result | Promise<Result>, options: ServeOptions<Result> = {}): void {
  const port = parentPort!;
  const answer = async ({ id, task }: TaskRequest<Task>) => {
    try {
      const result = await handle(task);
      port.postMessage({ id, result } satisfies TaskReply<Result>, options.transfer?.(result) ?? []);
    } catch (err) {
      port.postMessage({ id, error: (err as Error).message } satisfies TaskReply<Result>);
    }
  };
  port.on('message', (request: TaskRequest<Task> | 'close') => {
    if (request !== 'close') return void answer(request);
    options.close?.();
    port.close();
  });
}
