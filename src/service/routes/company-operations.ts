// The company's operations as its routes read them: a page of pulls or pushes (taking its
// turn at the read pool like any costly read), and one pull by id, 404 unless the company
// in the path owns it.
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import type { PagePlan, PageRequest } from '../store/paging.js';
import type { PullRow } from '../store/pulls.js';
import { ownedCompany } from './companies.js';

/** One page of the path's company's operations, each as `record` gives it on the wire. */
export async function operationsPage<Row>(
  ctx: ServiceContext, request: FastifyRequest, plan: (companyId: string, page: PageRequest) => PagePlan, record: (row: Row) => unknown,
): Promise<unknown> {
  const company = await ownedCompany(ctx, request);
  const page = parsePageRequest(queryOf(request));
  const { rows, total } = await ctx.reads.page<Row>(request.auth.client.id, plan(company.id, page));
  return envelope(rows.map(record), total, page, request.url);
}

/** The pull (data set) named by the path's datasetId, of the path's company. */
export async function companyPull(ctx: ServiceContext, request: FastifyRequest): Promise<PullRow> {
  const company = await ownedCompany(ctx, request);
  const { datasetId = '' } = params(request);
  const pull = await ctx.store.getPull(datasetId);
  if (!pull || pull.company_id !== company.id) throw errors.datasetNotFound(datasetId, company.id);
  return pull;
}
