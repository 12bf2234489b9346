// The one place that chooses the adapter to the third-party platforms: today the sandbox
// platforms over HTTP at `platformUrl`, as a real platform's adapter would be. The API
// (token checks, pushes) and the sync worker thread both take theirs from here.
import type { Clock } from '../../lib/clock.js';
import type { PlatformAdapter } from './adapter.js';
import { createSandboxAdapter } from './sandbox-adapter.js';

export type ClosablePlatform = PlatformAdapter & { close(): Promise<void> };

export function platformAdapter(platformUrl: string, clock?: Clock): ClosablePlatform {
  return createSandboxAdapter(platformUrl, clock ? { clock } : {});
}
