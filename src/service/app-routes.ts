// Every area's routes on the one fastify instance, in the order they are registered.
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from './context.js';
import type { ServiceOptions } from './options.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerAttachmentRoutes } from './routes/attachments.js';
import { registerCompanyRoutes } from './routes/companies.js';
import { registerCompanyProductRoutes } from './routes/company-products.js';
import { registerConnectionRoutes } from './routes/connections.js';
import { registerDataConfigRoutes } from './routes/data-configs.js';
import { registerDataRoutes } from './routes/data.js';
import { registerIntegrationRoutes } from './routes/integrations.js';
import { registerInvoicePdfRoutes } from './routes/invoice-pdf.js';
import { registerProfileRoutes } from './routes/profile.js';
import { registerPushRoutes } from './routes/push.js';
import { registerSyncSettingsRoutes } from './routes/sync-settings.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerEventRoutes } from './routes/events.js';

export function registerRoutes(app: FastifyInstance, ctx: ServiceContext, options: ServiceOptions): void {
  registerAdminRoutes(app, ctx);
  registerProfileRoutes(app, ctx);
  registerCompanyProductRoutes(app, ctx);
  registerCompanyRoutes(app, ctx);
  registerConnectionRoutes(app, ctx);
  registerIntegrationRoutes(app);
  registerDataRoutes(app, ctx);
  registerDataConfigRoutes(app, ctx);
  registerInvoicePdfRoutes(app, ctx);
  registerPushRoutes(app, ctx);
  registerAttachmentRoutes(app, ctx);
  registerSyncSettingsRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerEventRoutes(app, ctx, { heartbeatMs: options.eventHeartbeatMs, ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}) });
}
