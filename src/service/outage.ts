// The database going away (PostgreSQL restarting, a network cut): requests answer 503 and
// background work pauses until it is back. Whoever runs the service is told once when it
// goes and once when it is back, not once per failed request or pass.
import { isDatabaseUnreachable } from './store/unreachable.js';

export class Outage {
  private down = false;

  /** `notice` gets each line with its event's name (database.lost, database.back), for a log that names events. */
  constructor(private readonly notice?: (message: string, event: 'database.lost' | 'database.back') => void) {}

  get ongoing(): boolean {
    return this.down;
  }

  /** Whether `err` says the database cannot be reached; the first such error of an outage is told. */
  lost(err: unknown): boolean {
    if (!isDatabaseUnreachable(err)) return false;
    if (!this.down) {
      this.down = true;
      this.notice?.(`the database cannot be reached (${(err as Error)?.message ?? err}); answering 503 and pausing background work until it is back`, 'database.lost');
    }
    return true;
  }

  /** Something just worked against the database. */
  back(): void {
    if (!this.down) return;
    this.down = false;
    this.notice?.('the database is reachable again', 'database.back');
  }
}
