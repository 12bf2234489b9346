// A company's products (PUT/DELETE /companies/{id}/products/{product}, and a refresh of
// the product's data), and the short-lived company access token for embedded flows.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { companyProductPayload } from '../events/payloads.js';
import { eventsOf, recordEvent } from '../events/record.js';
import { errors } from '../errors.js';
import { params } from '../http/body.js';
import { defineRoute } from '../http/route.js';
import { queueAll } from '../sync/enqueue.js';
import { ownedCompany } from './companies.js';

const PRODUCT = /^[a-z][a-z0-9-]{1,49}$/;
export const ACCESS_TOKEN_SECONDS = 86_400;
const ACCESS_TOKEN_PURPOSE = 'ferry/company-access-token';

export function registerCompanyProductRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;
  const productOf = (raw: string) => {
    const product = raw.toLowerCase();
    if (!PRODUCT.test(product)) throw errors.notAProduct(raw);
    return product;
  };

  defineRoute(app, '/companies/:companyId/products/:productIdentifier', {
    // The products are read and written in one transaction, so concurrent changes do not undo each other.
    PUT: async (request, reply) => {
      await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        const product = productOf(params(request).productIdentifier ?? '');
        const products = JSON.parse(company.products) as string[];
        if (products.includes(product)) return;
        const now = [...products, product];
        await tx.setCompanyProducts(company.id, now);
        await recordEvent(eventsOf(ctx), { clientId: company.client_id, company, eventType: 'company.product.added', payload: companyProductPayload(company, product, now) });
      });
      return reply.code(204).send();
    },
    DELETE: async (request, reply) => {
      await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        const product = productOf(params(request).productIdentifier ?? '');
        const products = JSON.parse(company.products) as string[];
        if (!products.includes(product)) return;
        const now = products.filter((p) => p !== product);
        await tx.setCompanyProducts(company.id, now);
        await recordEvent(eventsOf(ctx), { clientId: company.client_id, company, eventType: 'company.product.removed', payload: companyProductPayload(company, product, now) });
      });
      return reply.code(204).send();
    },
  });

  // A product's data is the company's data sets: a refresh queues a pull of each (as /data/all does).
  defineRoute(app, '/companies/:companyId/products/:productIdentifier/refresh', {
    POST: async (request, reply) => {
      // Checked and queued in one transaction: the pulls are for the connections as they are when checked.
      const pulls = await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        const product = productOf(params(request).productIdentifier ?? '');
        if (!(JSON.parse(company.products) as string[]).includes(product)) {
          throw errors.productNotEnabled(product, company.id);
        }
        return queueAll(tx, clock, (await tx.listConnections(company.id, { page: 1, pageSize: 5000 })).rows);
      });
      if (pulls.length > 0) ctx.wakeWorker();
      return reply.code(202).send();
    },
  });

  // Sealed with the service's secret key: only this service can read it back (openCompanyAccessToken).
  const accessToken = {
    GET: async (request: FastifyRequest) => {
      const company = await ownedCompany(ctx, request);
      const expires = clock.now().getTime() + ACCESS_TOKEN_SECONDS * 1000;
      const sealed = ctx.sealer.seal({ companyId: company.id, expires: isoSeconds(new Date(expires)) }, ACCESS_TOKEN_PURPOSE);
      return { expiresIn: ACCESS_TOKEN_SECONDS, accessToken: sealed.toString('base64url'), tokenType: 'Bearer' };
    },
  };
  defineRoute(app, '/companies/:companyId/accessToken', accessToken);
  // Deprecated in the public API in favour of /companies/{id}/accessToken; it answers the same here.
  defineRoute(app, '/companies/:companyId/connectionManagement/accessToken', accessToken);
}

/** The company a company access token was issued for, or undefined when it is not one of ours or has expired. */
export function openCompanyAccessToken(ctx: Pick<ServiceContext, 'sealer' | 'clock'>, token: string): string | undefined {
  try {
    const { companyId, expires } = ctx.sealer.open<{ companyId: string; expires: string }>(Buffer.from(token, 'base64url'), ACCESS_TOKEN_PURPOSE);
    return Date.parse(expires) > ctx.clock.now().getTime() ? companyId : undefined;
  } catch {
    return undefined;
  }
}
