// A connection to the target service: its client, its base URL, and whether it is the
// embedded service this process started.
import type { ApiClient } from './client.js';

export interface Connection {
  client: ApiClient;
  baseUrl: string;
  embedded: boolean;
}
