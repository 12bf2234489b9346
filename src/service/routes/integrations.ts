// /integrations: ferry's registry of platforms as the public API lists them (with ferry's
// own fields after the public ones: migration route, token schema, data types), their
// branding, and the branding images.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { baseUrlOf, params, queryOf } from '../http/body.js';
import { BRANDING_IMAGES, brandingImageUrl, brandingRecord, brandingSourceId, brandingSvg, type BrandingImage } from '../integrations/branding.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { defineRoute } from '../http/route.js';
import { integrationByKey, integrationId } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import { listIntegrationKeys, registryTable } from '../store/integrations.js';

function integrationRecord(integration: Integration, baseUrl: string): Record<string, unknown> {
  return {
    key: integration.key,
    logoUrl: brandingImageUrl(baseUrl, integration.key, 'logo-full'),
    name: integration.name,
    enabled: true,
    sourceId: brandingSourceId(integration.key),
    sourceType: integration.sourceType,
    integrationId: integrationId(integration.key),
    isOfflineConnector: false,
    isBeta: false,
    dataProvidedBy: integration.name,
    migrationRoute: integration.migrationRoute,
    tokenFields: integration.tokenFields.map(({ name, required, description }) => ({ name, required, description })),
    dataTypes: integration.dataTypes,
  };
}

export function registerIntegrationRoutes(app: FastifyInstance): void {
  const table = registryTable();
  app.addHook('onClose', async () => table.close());

  defineRoute(app, '/integrations', {
    GET: async (request) => {
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = listIntegrationKeys(table, page);
      return envelope(rows.map((row) => integrationRecord(integrationByKey(row.key)!, baseUrlOf(request))), total, page, request.url);
    },
  });

  defineRoute(app, '/integrations/:platformKey', {
    GET: async (request) => integrationRecord(integrationOf(request), baseUrlOf(request)),
  });

  defineRoute(app, '/integrations/:platformKey/branding', {
    GET: async (request) => brandingRecord(integrationOf(request), baseUrlOf(request)),
  });

  // The images themselves: no key needed (see app.ts), nothing in them but the platform's name.
  defineRoute(app, '/branding/:platformKey/:image', {
    GET: async (request, reply) => {
      const { image = '' } = params(request);
      const which = image.replace(/\.svg$/, '') as BrandingImage;
      if (!image.endsWith('.svg') || !BRANDING_IMAGES.includes(which)) throw errors.brandingImageNotFound(image);
      return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(brandingSvg(integrationOf(request), which));
    },
  });
}

/** The integration :platformKey names (any case), or 404. */
export function integrationOf(request: FastifyRequest): Integration {
  const { platformKey = '' } = params(request);
  const integration = integrationByKey(platformKey.toLowerCase());
  if (!integration) throw errors.integrationNotFound(platformKey);
  return integration;
}
