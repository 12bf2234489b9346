// Worker threads that clients take turns at (fair-queue.ts): the reader threads (pool.ts)
// and the render threads (documents/render-pool.ts) are each one. A thread runs one task
// at a time. Threads start on first need (the embedded CLI never pays for threads it does
// not use); one that dies fails its task and is replaced on the next.
import type { Worker } from 'node:worker_threads';
import { errors } from '../errors.js';
import { FairQueue } from './fair-queue.js';

/** What the pool posts to a thread, and what the thread answers (thread-tasks.ts). */
export type TaskRequest<Task> = { id: number; task: Task };
export type TaskReply<Result> = { id: number; result: Result } | { id: number; error: string };

export interface ThreadPoolOptions {
  threads: number;
  /** Tasks one client may have waiting; past that, 429. */
  maxWaitingPerClient: number;
  /** Starts one thread. */
  start(): Worker;
  /** Ends a thread when the pool closes (by default: asks it to close, and waits for it to exit). */
  stop?(worker: Worker): Promise<unknown>;
}

interface Job<Task, Result> {
  task: Task;
  resolve(result: Result): void;
  reject(err: unknown): void;
}

interface Thread<Task, Result> {
  worker: Worker;
  busy?: { id: number; client: string; job: Job<Task, Result> };
}

export class ThreadPool<Task, Result> {
  private readonly queue: FairQueue<Job<Task, Result>>;
  private readonly threads: Array<Thread<Task, Result>> = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: ThreadPoolOptions) {
    this.queue = new FairQueue(options.threads, options.maxWaitingPerClient);
  }

  /** `task` run in a thread for `client`, in turn with other clients. */
  run(client: string, task: Task): Promise<Result> {
    if (this.closed) return Promise.reject(errors.maintenance());
    return new Promise<Result>((resolve, reject) => {
      if (!this.queue.add(client, { task, resolve, reject })) return reject(errors.tooManyRequests(1, 'fair_queue'));
      this.pump();
    });
  }

  /** Tasks of `client` waiting or running. */
  held(client: string): number {
    return this.queue.held(client);
  }

  /** Tasks waiting for a thread, for every client or one. */
  waiting(client?: string): number {
    return this.queue.waitingCount(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(errors.maintenance());
    await Promise.all(this.threads.map(({ worker }) => this.stop(worker)));
    this.threads.length = 0;
  }

  private pump(): void {
    for (;;) {
      const thread = this.idleThread();
      if (!thread) return;
      const next = this.queue.take();
      if (!next) return;
      const id = this.nextId++;
      thread.busy = { id, client: next.client, job: next.job };
      thread.worker.postMessage({ id, task: next.job.task } satisfies TaskRequest<Task>);
    }
  }

  private idleThread(): Thread<Task, Result> | undefined {
    const idle = this.threads.find((thread) => !thread.busy);
    if (idle || this.threads.length >= this.options.threads) return idle;
    const thread: Thread<Task, Result> = { worker: this.options.start() };
    thread.worker.on('message', (reply: TaskReply<Result>) => this.finish(thread, reply));
    thread.worker.on('error', (err) => this.lose(thread, err));
    thread.worker.on('exit', () => this.lose(thread, new Error('worker thread exited')));
    this.threads.push(thread);
    return thread;
  }

  private finish(thread: Thread<Task, Result>, reply: TaskReply<Result>): void {
    const busy = thread.busy;
    if (!busy || busy.id !== reply.id) return;
    thread.busy = undefined;
    this.queue.done(busy.client);
    if ('error' in reply) busy.job.reject(new Error(reply.error));
    else busy.job.resolve(reply.result);
    this.pump();
  }

  private lose(thread: Thread<Task, Result>, err: unknown): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    this.threads.splice(at, 1);
    if (thread.busy) {
      this.queue.done(thread.busy.client);
      // A task cut short by the pool closing is refused as the waiting ones are (503); otherwise it failed (500).
      thread.busy.job.reject(this.closed ? errors.maintenance() : err);
    }
    if (!this.closed) this.pump();
  }

  private async stop(worker: Worker): Promise<void> {
    if (this.options.stop) return void (await this.options.stop(worker));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    await exited;
  }
}
