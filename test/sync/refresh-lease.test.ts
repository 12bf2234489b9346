// Refresh tokens are single-use: two refreshes of one connection with the same refresh
// token revoke the grant. The request thread (pushes) and the sync worker thread each have
// their own database connection; the refresh lease in the shared database makes them
// take turns. Two stores on the same database stand in for the two threads here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS } from '../../src/sandbox/index.js';
import { freshTokens, readTokens } from '../../src/service/tokens.js';
import { anotherStore } from '../helpers/at-rest.js';
import { linkedCompany } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

describe('refresh lease across database connections', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('refreshes once when two threads find the same expired token at the same time', async () => {
    const linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 10);
    const { sealer, platform } = h.service.context;
    const before = (await readTokens(h.service.context.store, sealer, linked.connectionId))!;
    h.clock.advance(DEFAULT_ACCESS_TOKEN_TTL_SECONDS + 60);
    const other = await anotherStore(h);
    try {
      const connection = (await other.getConnectionById(linked.connectionId))!;
      const now = () => h.clock.now().toISOString();
      const [a, b] = await Promise.all([
        freshTokens(h.service.context.store, sealer, platform!, connection, now),
        freshTokens(other, sealer, platform!, connection, now),
      ]);
      expect(a.refreshToken).not.toBe(before.refreshToken);
      expect(b).toEqual(a);
    } finally {
      await other.close();
    }
    // The grant is alive: a sync with the stored tokens completes.
    await h.api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`);
    await h.drain();
    expect((await h.api.call('GET', `/companies/${linked.companyId}/dataStatus`)).body.invoices.currentStatus).toBe('Complete');
    expect((await h.service.context.store.getConnectionById(linked.connectionId))!.status).toBe('Linked');
  });
});
