// The contract every platform adapter keeps, for every integration of the registry: what
// the service's sync worker, push worker and authorization endpoint rely on. A second
// implementation runs the same suite by handing runAdapterContract its own fixture.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformAuthError, PlatformFetchError, PlatformRateLimitError, type PlatformAdapter, type StoredTokens } from '../../src/service/adapters/adapter.js';
import { DATA_TYPES } from '../../src/platforms/data-types.js';
import { INTEGRATIONS } from '../../src/platforms/registry.js';
import { INTERNAL_ACCESS_FIELD, accessFieldOf, credentialRoles, expiryFieldOf } from '../../src/sandbox/index.js';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

export interface ContractTenant {
  id: string;
  orgId?: string;
  tokens: Record<string, string>;
}

/** The platform behind the adapter, as far as the suite steers it. */
export interface ContractPlatform {
  clock: { now(): Date; advance(seconds: number): void };
  /** Issues tenants of a platform with the tokens a client would hold (`extra`: invoices, seed). */
  tenants(platformKey: string, extra?: Record<string, unknown>): Promise<ContractTenant[]>;
  /** The client's legacy application refreshes the tenant's grant (status 200 with the outcome, or 400 without refresh tokens). */
  legacyRefresh(tenantId: string): Promise<{ status: number; body: { outcome?: string } }>;
  /** Tokens of the tenant whose credential the platform has revoked. */
  revokedTokens(tenantId: string): Promise<Record<string, string>>;
  /** Platform behaviour: rate limit, fault rate, push mode and delay. */
  settings(changes: Record<string, unknown>): Promise<void>;
}

export interface ContractFixture {
  adapter: PlatformAdapter;
  platform: ContractPlatform;
  /** An adapter pointed at a platform that is not there. */
  unreachable(): Promise<PlatformAdapter & { close(): Promise<void> }>;
  close(): Promise<void>;
}

export function runAdapterContract(makeFixture: () => Promise<ContractFixture>): void {
  let fixture: ContractFixture;
  let adapter: PlatformAdapter;
  let platform: ContractPlatform;
  beforeAll(async () => {
    fixture = await makeFixture();
    ({ adapter, platform } = fixture);
  });
  afterAll(async () => {
    await fixture.close();
  });

  async function rejection(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (err) {
      return err;
    }
    throw new Error('expected a rejection');
  }

  describe.each(INTEGRATIONS.map((i) => [i.key, i] as const))('%s contract', (key, integration) => {
    const roles = credentialRoles(integration);
    const refreshable = roles.refresh !== undefined;
    let tenant: { id: string; orgId?: string; tokens: Record<string, string> };
    let tokens: StoredTokens;

    it('verifies the migrated tokens and names the organisation', async () => {
      tenant = (await platform.tenants(key, { invoices: 12, seed: 1000 }))[0]!;
      const verified = await adapter.verify(key, tenant.tokens);
      tokens = verified.tokens;
      expect(verified.connectionInfo?.organisationId).toBe(tenant.orgId ?? tenant.id);
      // Every client field survives; only the credential fields may have rotated.
      expect(Object.keys(tokens)).toEqual(expect.arrayContaining(Object.keys(tenant.tokens)));
      if (refreshable) expect(tokens[expiryFieldOf(roles)]).toMatch(ISO_Z);
      if (!roles.access) expect(tokens[INTERNAL_ACCESS_FIELD]).toBeTruthy();
    });

    it('fetches the first page of every supported data type', async () => {
      for (const dataType of integration.dataTypes) {
        const page = await adapter.fetchPage(key, tokens, dataType, undefined, 5);
        expect(page.records.length, dataType).toBeGreaterThan(0);
        expect(page.records.length, dataType).toBeLessThanOrEqual(5);
        for (const record of page.records) {
          expect(typeof record.id, dataType).toBe('string');
          expect(record.modifiedDate, dataType).toMatch(ISO_Z);
        }
        if (page.total !== undefined && page.total > 5) {
          const next = await adapter.fetchPage(key, tokens, dataType, page.next, 5);
          expect(next.records[0]?.id).not.toBe(page.records[0]?.id);
        } else {
          expect(page.next).toBeUndefined();
        }
      }
    });

    it('refreshes an expired access token in ensureFresh, rotating it', async () => {
      if (!refreshable) {
        platform.clock.advance(24 * 3600);
        expect(await adapter.ensureFresh(key, tokens, 300)).toBe(tokens);
        return;
      }
      expect(await adapter.ensureFresh(key, tokens, 60)).toBe(tokens);
      platform.clock.advance(30 * 60 + 1);
      const expired = await rejection(adapter.fetchPage(key, tokens, integration.dataTypes[0]!, undefined, 1));
      expect(expired).toBeInstanceOf(PlatformAuthError);
      expect((expired as PlatformAuthError).revoked).toBe(false);
      const fresh = await adapter.ensureFresh(key, tokens, 60);
      const access = accessFieldOf(roles);
      expect(fresh[access]).not.toBe(tokens[access]);
      expect(fresh[roles.refresh!]).not.toBe(tokens[roles.refresh!]);
      expect(Date.parse(fresh[expiryFieldOf(roles)]!)).toBeGreaterThan(platform.clock.now().getTime());
      if (roles.refreshExpiresAt) expect(fresh[roles.refreshExpiresAt]).toMatch(ISO_Z);
      tokens = fresh;
      expect((await adapter.fetchPage(key, tokens, integration.dataTypes[0]!, undefined, 1)).records).toHaveLength(1);
    });

    it('reports the grant revoked once the legacy application refreshes', async () => {
      let dead = tokens;
      if (refreshable) {
        const legacy = await platform.legacyRefresh(tenant.id);
        expect(legacy.body.outcome).toBe('grant-revoked');
      } else {
        // Without refresh tokens there is nothing to reuse; a revoked credential stands in.
        expect((await platform.legacyRefresh(tenant.id)).status).toBe(400);
        dead = await platform.revokedTokens(tenant.id);
      }
      const err = await rejection(adapter.fetchPage(key, dead, integration.dataTypes[0]!, undefined, 1));
      expect(err).toBeInstanceOf(PlatformAuthError);
      expect((err as PlatformAuthError).revoked).toBe(true);
      const verify = await rejection(adapter.verify(key, dead));
      expect((verify as PlatformAuthError).revoked).toBe(true);
      if (refreshable) {
        const refresh = await rejection(adapter.ensureFresh(key, dead, Number.MAX_SAFE_INTEGER));
        expect((refresh as PlatformAuthError).revoked).toBe(true);
      }
    });

    it('rejects a data type the platform does not support', async () => {
      const [fresh] = await platform.tenants(key, { invoices: 1 });
      const { tokens: live } = await adapter.verify(key, fresh!.tokens);
      const unsupported = DATA_TYPES.find((t) => !integration.dataTypes.includes(t.key))?.key ?? 'timesheets';
      const err = await rejection(adapter.fetchPage(key, live, unsupported, undefined, 10));
      expect(err).toBeInstanceOf(PlatformFetchError);
      expect((err as PlatformFetchError).status).toBe(404);
      expect((err as Error).message).toBe(`Datatype ${unsupported} not supported by platform(s) ${integration.name}`);
    });
  });

  describe('adapter error mapping and pushes', () => {
    it('maps 429 and 5xx, and reports pushes as Success, Pending then settled, or Failed', async () => {
      const [tenant] = await platform.tenants('mqjo', { invoices: 3 });
      const { tokens } = await adapter.verify('mqjo', tenant!.tokens);

      await platform.settings({ rateLimit: 1 });
      await adapter.fetchPage('mqjo', tokens, 'invoices', undefined, 1);
      const limited = await rejection(adapter.fetchPage('mqjo', tokens, 'invoices', undefined, 1));
      expect(limited).toBeInstanceOf(PlatformRateLimitError);
      expect((limited as PlatformRateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      await platform.settings({ rateLimit: 0, faultRate: 1 });
      const fault = await rejection(adapter.fetchPage('mqjo', tokens, 'invoices', undefined, 1));
      expect(fault).toBeInstanceOf(PlatformFetchError);
      expect([500, 503]).toContain((fault as PlatformFetchError).status);
      await platform.settings({ faultRate: 0 });

      const customer = (await adapter.fetchPage('mqjo', tokens, 'customers', undefined, 1)).records[0]!;
      const invoice = {
        customerRef: { id: customer.id }, issueDate: '2026-11-01T00:00:00Z', status: 'Draft', totalTaxAmount: 0, totalAmount: 10, amountDue: 10,
      };
      const created = await adapter.push('mqjo', tokens, 'invoices', invoice);
      expect(created.status).toBe('Success');
      const invalid = await adapter.push('mqjo', tokens, 'invoices', { ...invoice, customerRef: undefined });
      expect(invalid).toMatchObject({ status: 'Failed', statusCode: 400, errors: [{ field: 'customerRef.id', message: 'customerRef.id is required.' }] });

      await platform.settings({ pushMode: 'async', pushDelaySeconds: 10 });
      const pending = await adapter.push('mqjo', tokens, 'invoices', invoice);
      expect(pending.status).toBe('Pending');
      const id = (pending as { platformPushId: string }).platformPushId;
      expect(await adapter.pushStatus('mqjo', tokens, id)).toEqual({ status: 'Pending', platformPushId: id });
      platform.clock.advance(10);
      const settled = await adapter.pushStatus('mqjo', tokens, id);
      expect(settled.status).toBe('Success');
      expect((settled as { record: Record<string, unknown> }).record.customerRef).toEqual({ id: customer.id });
      await platform.settings({ pushMode: 'sync' });
    });

    it('turns an unreachable platform into PlatformFetchError', async () => {
      const offline = await fixture.unreachable();
      try {
        const err = await rejection(offline.fetchPage('mqjo', { accessToken: 'x', tenantId: 'y' }, 'invoices', undefined, 1));
        expect(err).toBeInstanceOf(PlatformFetchError);
      } finally {
        await offline.close();
      }
    });
  });
}
