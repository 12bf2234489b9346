// Who reads next: clients take turns, and while several are waiting none holds more than
// its share of the reader threads, so one client's pile of costly reads cannot make the
// others wait behind all of it.

export class FairQueue<Job> {
  /** Clients with jobs waiting, each with its jobs in arrival order. */
  private readonly waiting = new Map<string, Job[]>();
  private readonly running = new Map<string, number>();
  /** When each client was last served: the one served longest ago (or never) goes next. */
  private readonly lastServed = new Map<string, number>();
  private turn = 0;

  constructor(private readonly slots: number, private readonly maxWaitingPerClient: number) {}

  /** Queues a job; false when the client already has its most jobs waiting. */
  add(client: string, job: Job): boolean {
    const jobs = this.waiting.get(client) ?? [];
    if (jobs.length >= this.maxWaitingPerClient) return false;
    jobs.push(job);
    this.waiting.set(client, jobs);
    return true;
  }

  /** The next job to start on a free slot, or undefined when none may start now. */
  take(): { client: string; job: Job } | undefined {
    let busy = 0;
    for (const n of this.running.values()) busy += n;
    if (busy >= this.slots) return undefined;
    const active = new Set([...this.waiting.keys(), ...this.running.keys()]).size;
    const share = Math.max(1, Math.floor(this.slots / active));
    let chosen: string | undefined;
    for (const client of this.waiting.keys()) {
      if ((this.running.get(client) ?? 0) >= share) continue;
      if (chosen === undefined || (this.lastServed.get(client) ?? -1) < (this.lastServed.get(chosen) ?? -1)) chosen = client;
    }
    if (chosen === undefined) return undefined;
    const jobs = this.waiting.get(chosen)!;
    const job = jobs.shift()!;
    if (jobs.length === 0) this.waiting.delete(chosen);
    this.running.set(chosen, (this.running.get(chosen) ?? 0) + 1);
    this.lastServed.set(chosen, this.turn++);
    return { client: chosen, job };
  }

  /** A job of `client` finished, freeing its slot. */
  done(client: string): void {
    const left = (this.running.get(client) ?? 1) - 1;
    if (left > 0) return void this.running.set(client, left);
    this.running.delete(client);
    if (!this.waiting.has(client)) this.lastServed.delete(client);
  }

  /** Jobs of `client` waiting or running. */
  held(client: string): number {
    return (this.waiting.get(client)?.length ?? 0) + (this.running.get(client) ?? 0);
  }

  /** Jobs waiting, for every client or one. */
  waitingCount(client?: string): number {
    if (client !== undefined) return this.waiting.get(client)?.length ?? 0;
    let n = 0;
    for (const jobs of this.waiting.values()) n += jobs.length;
    return n;
  }

  /** Every waiting job, removed (when the pool closes). */
  drain(): Job[] {
    const jobs = [...this.waiting.values()].flat();
    this.waiting.clear();
    return jobs;
  }
}
