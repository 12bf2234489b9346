// What the sandbox tests share: the admin key their sandbox accepts, a fake clock they
// move by hand (no sleeps), and a bearer header. The sandbox starts in helpers/stack.ts.

/** The admin key this sandbox accepts on /admin, sent by `call` on admin paths. */
export const SANDBOX_ADMIN_KEY = 'fy_sandbox-test-admin-key';

export class FakeClock {
  private ms: number;

  constructor(start = Date.UTC(2026, 10, 21, 10, 0, 0)) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
