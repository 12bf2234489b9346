// The embedded target: the bundled service started in-process on 127.0.0.1 over the
// data dir, used with the data dir's admin key.
import { createService } from '../service/app.js';

export interface Embedded {
  baseUrl: string;
  adminKey: string;
  close(): Promise<void>;
}

export async function startEmbedded(dataDir: string): Promise<Embedded> {
  const service = createService({ dataDir, rateLimit: 0 });
  const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
  return { baseUrl, adminKey: service.adminKey, close: () => service.close() };
}
