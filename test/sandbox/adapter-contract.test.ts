// The platform adapter contract, run against the sandbox platforms over HTTP.
import { createSandboxAdapter } from '../../src/service/adapters/sandbox-adapter.js';
import { startTestStack } from '../helpers/stack.js';
import { runAdapterContract } from './adapter-contract.js';

runAdapterContract(async () => {
  const sb = await startTestStack('sandbox');
  const adapter = createSandboxAdapter(sb.url, { clock: sb.clock });
  return {
    adapter,
    platform: {
      clock: sb.clock,
      tenants: (platformKey, extra) => sb.tenants(platformKey, extra),
      legacyRefresh: (tenantId) => sb.call('POST', `/admin/tenants/${tenantId}/legacy-refresh`),
      revokedTokens: async (tenantId) => (await sb.call('POST', `/admin/tenants/${tenantId}/tokens`, { body: { state: 'revoked' } })).body.tokens,
      settings: async (changes) => void (await sb.call('PATCH', '/admin/settings', { body: changes })),
    },
    async unreachable() {
      const gone = await startTestStack('sandbox');
      await gone.stop();
      return createSandboxAdapter(gone.url);
    },
    async close() {
      await adapter.close();
      await sb.stop();
    },
  };
});
