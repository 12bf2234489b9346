// /companies: create (with the Free plan's company limit), list, get, patch, put, delete.
import { timeOrderedId } from '../../lib/time-ordered-id.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { companyPayload } from '../events/payloads.js';
import { eventsOf, recordEvent, recordNewCompany } from '../events/record.js';
import { errors } from '../errors.js';
import { assertOwns } from '../http/auth.js';
import { baseUrlOf, objectBody, params, queryOf } from '../http/body.js';
import { companyInput, companyPatch } from '../http/company-input.js';
import { envelope, linkedParams, parsePageRequest } from '../http/paging.js';
import { companyRecord } from '../wire/records.js';
import { defineRoute, withBody } from '../http/route.js';
import { FILTERABLE_TAG_KEY, FREE_PLAN_COMPANY_LIMIT } from '../../platforms/limits.js';
import type { CompanyInput, CompanyRow } from '../store/companies.js';
import { newCompanyRow } from '../store/store.js';

/** The company named in the path, after the ownership check (404 unknown, 403 not yours). */
export async function ownedCompany(ctx: ServiceContext, request: FastifyRequest): Promise<CompanyRow> {
  const { companyId = '' } = params(request);
  const company = await ctx.store.getCompany(companyId);
  if (!company) throw errors.companyNotFound(companyId);
  assertOwns(request.auth, company.client_id);
  return company;
}

function currentInput(row: CompanyRow): CompanyInput {
  const input: CompanyInput = { name: row.name, tags: JSON.parse(row.tags) };
  if (row.description) input.description = row.description;
  return input;
}

function tagFilter(request: FastifyRequest): { key: string; value: string } | undefined {
  const raw = queryOf(request).tags;
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw[0] ?? '' : raw;
  const at = text.indexOf('=');
  if (at < 1) throw errors.invalidParameter('tags', 'use tags=key=value');
  const key = text.slice(0, at);
  if (!FILTERABLE_TAG_KEY.test(key)) {
    throw errors.invalidParameter('tags', 'the tag key must be 1 to 64 letters, digits, "_", "-" or "."');
  }
  return { key, value: text.slice(at + 1) };
}

export function registerCompanyRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;
  const cache = ctx.responseCache;
  const present = async (request: FastifyRequest, row: CompanyRow) =>
    companyRecord(row, (await store.connectionsByCompany([row.id])).get(row.id) ?? [], baseUrlOf(request));

  defineRoute(app, '/companies', {
    // The most requested list: served from the response cache while nothing has changed.
    GET: async (request, reply) => {
      const base = baseUrlOf(request);
      const page = parsePageRequest(queryOf(request));
      // Keyed by what the body depends on: parsed paging, the filters as linked, the base URL.
      const key = JSON.stringify([base, page.page, page.pageSize, linkedParams(request.url)]);
      const body = await cache.getOrMake(request.auth.client.id, key, request.dataVersion, async () => {
        const client = request.auth.client.id;
        const { rows, total } = await ctx.reads.page<CompanyRow>(client, ctx.store.companiesPage(client, page, tagFilter(request)));
        const connections = await store.connectionsByCompany(rows.map((r) => r.id));
        const results = rows.map((row) => companyRecord(row, connections.get(row.id) ?? [], base));
        return JSON.stringify(envelope(results, total, page, request.url));
      });
      return reply.type('application/json; charset=utf-8').send(body);
    },
    POST: withBody(async (request) => {
      const input = companyInput(objectBody(request));
      const client = request.auth.client;
      const now = clock.now();
      const company = newCompanyRow(timeOrderedId(now.getTime()), client.id, input, isoSeconds(now));
      // The company and its event in one write (one statement on PostgreSQL); on the Free
      // plan, counted and written in one transaction so concurrent creates cannot pass the
      // limit together.
      const insert = () => recordNewCompany(eventsOf(ctx), company, { eventType: 'company.created', payload: companyPayload(company, [], baseUrlOf(request)) });
      const row = client.plan === 'Free'
        ? await store.transaction(async (tx) => {
          if (await tx.countCompanies(client.id) >= FREE_PLAN_COMPANY_LIMIT) throw errors.companyLimit();
          return insert();
        })
        : await insert();
      // A company just made has no connections yet: no read for them.
      return companyRecord(row, [], baseUrlOf(request));
    }),
  });

  defineRoute(app, '/companies/:companyId', {
    // The company and its connections in one read.
    GET: async (request) => {
      const { companyId = '' } = params(request);
      const found = await store.getCompanyWithConnections(companyId);
      if (!found) throw errors.companyNotFound(companyId);
      assertOwns(request.auth, found.company.client_id);
      return companyRecord(found.company, found.connections, baseUrlOf(request));
    },
    // Read, check and write in one transaction: a concurrent change cannot come in between.
    PATCH: withBody(async (request) => store.transaction(async (tx) => {
      const company = await ownedCompany(ctx, request);
      return present(request, await tx.replaceCompany(company.id, companyPatch(objectBody(request), currentInput(company))));
    })),
    PUT: withBody(async (request) => store.transaction(async (tx) => {
      const company = await ownedCompany(ctx, request);
      return present(request, await tx.replaceCompany(company.id, companyInput(objectBody(request))));
    })),
    DELETE: async (request, reply) => {
      await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        // The company as it was: read before it goes, with its connections.
        const payload = companyPayload(company, (await tx.connectionsByCompany([company.id])).get(company.id) ?? [], baseUrlOf(request));
        await tx.deleteCompany(company.id);
        await recordEvent(eventsOf(ctx), { clientId: company.client_id, company, eventType: 'company.deleted', payload });
      });
      return reply.code(204).send();
    },
  });
}
