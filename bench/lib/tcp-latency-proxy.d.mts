// Types of tcp-latency-proxy.mjs for the TypeScript tests (the JSDoc there is the reference).

export interface TcpLatencyProxyOptions {
  /** The upstream's host (default 127.0.0.1) and port. */
  host?: string;
  port: number;
  /** Added to every round trip: each byte from the client reaches the upstream this much later. */
  delayMs: number;
}

export interface TcpLatencyProxy {
  port: number;
  /** The same database URL, through the proxy. */
  url(databaseUrl: string): string;
  stats(): { connections: number; bytesDelayed: number };
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export function startTcpLatencyProxy(options: TcpLatencyProxyOptions): Promise<TcpLatencyProxy>;
