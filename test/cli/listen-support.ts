// Shared by the `ferry listen` tests: the `ferry serve` they listen to, a receiver on
// 127.0.0.1 that verifies every request with the `standardwebhooks` package (not ferry's
// own code), and `ferry listen` running in this process or as a child, its stdout lines
// waited on with deadlines.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { PassThrough, type Readable } from 'node:stream';
import { Webhook } from 'standardwebhooks';
import { runCli } from '../../src/cli/program.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { FERRY_BIN, cleanEnv } from '../helpers/cli.js';
import { watchWarnings } from '../helpers/in-process.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';

/** A warning Node printed on stderr: a real process shows it, and ferry must give it no cause. */
export const NODE_WARNING = /\(node:\d+\) \w*Warning: .*/;

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  verified: unknown;
  error?: string;
}

/** A receiver that verifies each request with the session's secret and answers `status(body)`. */
export class Receiver {
  secret = '';
  deliveries: Delivery[] = [];
  status: (body: string) => number = () => 200;
  private server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const delivery: Delivery = { headers, body, verified: undefined };
        try {
          delivery.verified = new Webhook(this.secret).verify(body, headers);
        } catch (err) {
          delivery.error = (err as Error).message;
        }
        this.deliveries.push(delivery);
        res.writeHead(delivery.error ? 400 : this.status(body));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface ListenStack {
  /** A `ferry serve` in this process (from the block's beforeAll on). */
  readonly serve: ServeHandle;
  receiver: Receiver;
  /** A company made with the admin key, as the admin account's event; its id. */
  createCompany(name: string): Promise<string>;
}

/** What the listen tests of a describe block run against: started before its tests, stopped after them. */
export function useListenStack(): ListenStack {
  let serve: ServeHandle | undefined;
  const receiver = new Receiver();
  beforeAll(async () => {
    serve = await startTestStack('serve');
    await receiver.start();
  }, 60_000);
  afterAll(async () => {
    await receiver.stop();
    await serve?.stop();
  });
  const started = (): ServeHandle => {
    if (!serve) throw new Error('ferry serve starts in the describe block\'s beforeAll');
    return serve;
  };
  return {
    get serve() {
      return started();
    },
    receiver,
    async createCompany(name) {
      const result = await started().api.call('POST', '/companies', { body: { name } });
      expect(result.status).toBe(200);
      return result.body.id as string;
    },
  };
}

export interface Listening {
  lines: string[];
  /** stderr so far (with any Node warning, as a process would print it). */
  stderr(): string;
  exited: Promise<{ code: number | null }>;
  /** Resolves with what `probe` finds once it finds something, or rejects after `ms`. */
  until<T>(what: string, probe: () => T | undefined, ms?: number): Promise<T>;
  /** Ctrl-C (SIGINT) or another signal: to the child, or, in this process, as main.ts passes it on. */
  interrupt(signal?: NodeJS.Signals): void;
}

/** `ferry listen …` in this process (`in-process`) or as the real binary (`child`). */
export function startListen(args: string[], where: 'in-process' | 'child'): Listening {
  const lines: string[] = [];
  let stderr = '';
  const waiters = new Set<() => void>();
  const poke = () => {
    for (const w of [...waiters]) w();
  };
  const follow = (stdout: Readable, errors: Readable) => {
    createInterface({ input: stdout }).on('line', (line) => {
      lines.push(line);
      poke();
    });
    errors.on('data', (d: Buffer) => {
      stderr += d.toString();
      poke();
    });
  };
  let exited: Promise<{ code: number | null }>;
  let interrupt: (signal?: NodeJS.Signals) => void;
  let warnings: string[] = [];
  if (where === 'child') {
    const child = spawn(process.execPath, [FERRY_BIN, 'listen', ...args], { env: cleanEnv(), stdio: 'pipe' });
    follow(child.stdout, child.stderr);
    exited = new Promise((resolve) => child.on('close', (code) => {
      poke();
      resolve({ code });
    }));
    interrupt = (signal = 'SIGINT') => void child.kill(signal);
  } else {
    const stdout = new PassThrough();
    const errors = new PassThrough();
    const stdin = new PassThrough();
    stdin.end();
    follow(stdout, errors);
    const controller = new AbortController();
    const watched = watchWarnings();
    const running = runCli(['listen', ...args], { stdin, stdout, stderr: errors, env: { HOME: '/nonexistent-ferry-home' } }, controller.signal);
    exited = running.then(async (code) => {
      warnings = await watched.stop();
      stdout.end();
      errors.end();
      poke();
      return { code };
    });
    interrupt = (signal = 'SIGINT') => controller.abort(signal);
  }
  const output = () => stderr + warnings.map((line) => `${line}\n`).join('');
  const until = <T>(what: string, probe: () => T | undefined, ms = 20_000) => new Promise<T>((resolve, reject) => {
    const check = () => {
      const found = probe();
      if (found === undefined) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve(found);
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out waiting for ${what}\nstdout:\n${lines.join('\n')}\nstderr:\n${output()}`));
    }, ms);
    waiters.add(check);
    check();
  });
  return { lines, stderr: output, exited, until, interrupt };
}
