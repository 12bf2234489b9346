// Sync settings of the account (/profile/syncSettings) and of a company
// (/companies/{id}/syncSettings). syncSchedule is in hours; under 24 needs a Paid plan.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors, type ValidationItem } from '../errors.js';
import { failIfAny, objectBody } from '../http/body.js';
import { defineRoute } from '../http/route.js';
import { dataTypeByKey } from '../integrations/data-types.js';
import { getClient, type ClientRow } from '../store/clients.js';
import { writeSettings, type SyncSetting } from '../store/sync-settings.js';
import { DEFAULT_SYNC_SCHEDULE_HOURS, effectiveSettings } from '../sync/settings.js';
import { ownedCompany } from './companies.js';

const MIN_FREE_SCHEDULE_HOURS = 24;

function parseSettings(body: Record<string, unknown>, client: ClientRow): SyncSetting[] {
  const items: ValidationItem[] = [];
  if (!Array.isArray(body.settings)) {
    throw errors.badRequest('settings must be an array.', [{ itemId: 'settings', message: 'settings must be an array of {dataType, syncSchedule, …}.', validatorName: 'SyncSettings' }]);
  }
  const settings = (body.settings as Array<Record<string, unknown>>).map((raw, i): SyncSetting => {
    const dataType = typeof raw?.dataType === 'string' ? raw.dataType : '';
    if (!dataTypeByKey(dataType)) items.push({ itemId: `settings[${i}].dataType`, message: `Unknown data type ${dataType || '(missing)'}.`, validatorName: 'SyncSettings' });
    const schedule = raw?.syncSchedule ?? DEFAULT_SYNC_SCHEDULE_HOURS;
    if (typeof schedule !== 'number' || !Number.isInteger(schedule) || schedule < 1) {
      items.push({ itemId: `settings[${i}].syncSchedule`, message: 'syncSchedule must be a whole number of hours, at least 1.', validatorName: 'SyncSettings' });
    }
    const setting: SyncSetting = {
      dataType,
      fetchOnFirstLink: raw?.fetchOnFirstLink === true,
      syncSchedule: typeof schedule === 'number' ? schedule : DEFAULT_SYNC_SCHEDULE_HOURS,
      syncOrder: typeof raw?.syncOrder === 'number' ? raw.syncOrder : i,
    };
    if (typeof raw?.syncFromUtc === 'string') setting.syncFromUtc = raw.syncFromUtc;
    if (typeof raw?.syncFromWindow === 'number') setting.syncFromWindow = raw.syncFromWindow;
    if (typeof raw?.monthsToSync === 'number') setting.monthsToSync = raw.monthsToSync;
    if (typeof raw?.isLocked === 'boolean') setting.isLocked = raw.isLocked;
    return setting;
  });
  failIfAny(items, 'The sync settings are not valid.');
  if (client.plan === 'Free' && settings.some((s) => s.syncSchedule < MIN_FREE_SCHEDULE_HOURS)) throw errors.syncScheduleNotAllowed();
  return settings;
}

export function registerSyncSettingsRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { db } = ctx;
  const companyView = (request: FastifyRequest) => {
    const company = ownedCompany(ctx, request);
    return { company, view: { companyId: company.id, ...effectiveSettings(db, company.client_id, company.id) } };
  };

  defineRoute(app, '/profile/syncSettings', {
    GET: async (request) => ({ clientId: request.auth.client.id, ...effectiveSettings(db, request.auth.client.id) }),
    POST: async (request) => {
      const client = request.auth.client;
      writeSettings(db, client.id, '', parseSettings(objectBody(request), client));
      return { clientId: client.id, ...effectiveSettings(db, client.id) };
    },
  });

  defineRoute(app, '/companies/:companyId/syncSettings', {
    GET: async (request) => companyView(request).view,
    POST: async (request) => {
      const { company } = companyView(request);
      // The plan that counts is the company owner's, also when an admin key sets it.
      writeSettings(db, company.client_id, company.id, parseSettings(objectBody(request), getClient(db, company.client_id)!));
      return companyView(request).view;
    },
  });
}
