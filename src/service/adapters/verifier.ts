// The seam between the authorization endpoint and the third-party platform: the service
// hands the platform the migrated tokens and stores what comes back (a refresh may
// rotate them). The sandbox platforms' adapter plugs in here.
import type { Integration } from '../../platforms/types.js';

export type Tokens = Record<string, string>;

export type VerifyResult =
  | { ok: true; tokens: Tokens; connectionInfo?: Record<string, unknown> }
  | { ok: false; message: string };

export interface TokenVerifier {
  verify(integration: Integration, tokens: Tokens): Promise<VerifyResult>;
}

/** Accepts any tokens that passed the schema check; for a service with no platform to ask. */
export const schemaOnlyVerifier: TokenVerifier = {
  async verify(_integration, tokens) {
    return { ok: true, tokens };
  },
};
