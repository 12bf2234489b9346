// Sync settings of the account (/profile/syncSettings) and of a company
// (/companies/{id}/syncSettings). syncSchedule is in hours; under 24 needs a Paid plan.
// One entry per data type.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors, type ValidationItem } from '../errors.js';
import { failIfAny, objectBody } from '../http/body.js';
import { refuseUnknownFields, unknownFieldItems } from '../http/known-fields.js';
import { defineRoute, withBody } from '../http/route.js';
import { dataTypeByKey } from '../../platforms/data-types.js';
import type { ClientRow } from '../store/clients.js';
import type { SyncSetting } from '../store/sync-settings.js';
import { DEFAULT_SYNC_SCHEDULE_HOURS, effectiveSettings } from '../sync/settings.js';
import { ownedCompany } from './companies.js';

const MIN_FREE_SCHEDULE_HOURS = 24;

/** A year: a schedule longer than that is a typo, and 1e308 hours would overflow every date. */
const MAX_SYNC_SCHEDULE_HOURS = 8760;
/** Twenty years of history is more than any platform keeps. */
const MAX_MONTHS = 240;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

type Check = (value: unknown) => boolean;
const integer = (min: number, max: number): Check => (v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isoDate: Check = (v) => typeof v === 'string' && ISO_DATE.test(v) && !Number.isNaN(Date.parse(v));

/** Fields a setting may leave out: absent is fine, anything else must pass its check. */
const OPTIONAL: Array<[keyof SyncSetting, Check, string]> = [
  ['syncFromUtc', isoDate, 'an ISO 8601 date such as 2024-01-01T00:00:00Z'],
  ['syncFromWindow', integer(0, MAX_MONTHS), `a whole number from 0 to ${MAX_MONTHS}`],
  ['monthsToSync', integer(1, MAX_MONTHS), `a whole number from 1 to ${MAX_MONTHS}`],
  ['syncOrder', integer(0, 10_000), 'a whole number from 0 to 10000'],
  ['isLocked', (v) => typeof v === 'boolean', 'true or false'],
  ['fetchOnFirstLink', (v) => typeof v === 'boolean', 'true or false'],
];

/** A setting's fields. */
const SETTING_FIELDS = ['dataType', 'fetchOnFirstLink', 'syncSchedule', 'syncOrder', 'syncFromUtc', 'syncFromWindow', 'monthsToSync', 'isLocked'];

/**
 * `owner` names whose settings the body holds (`clientId`, `companyId`): the key or the path
 * decides that, so it is not read; nor is `overridesDefaults` (the settings given replace
 * those the account or company had, whatever it says).
 */
function parseSettings(body: Record<string, unknown>, client: ClientRow, owner: 'clientId' | 'companyId'): SyncSetting[] {
  refuseUnknownFields(body, [owner, 'settings', 'overridesDefaults']);
  const items: ValidationItem[] = [];
  if (!Array.isArray(body.settings)) {
    throw errors.syncSettingsNotArray();
  }
  (body.settings as unknown[]).forEach((raw, i) => {
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) items.push(...unknownFieldItems(raw as Record<string, unknown>, SETTING_FIELDS, `settings[${i}].`));
  });
  failIfAny(items, errors.unknownFields);
  /** Data type → the index of its entry: one entry per data type. */
  const entries = new Map<string, number>();
  const settings = (body.settings as Array<Record<string, unknown>>).map((raw, i): SyncSetting => {
    const problem = (field: string, message: string) => items.push({ itemId: `settings[${i}].${field}`, message, validatorName: 'SyncSettings' });
    const dataType = typeof raw?.dataType === 'string' ? raw.dataType : '';
    const first = entries.get(dataType);
    if (!dataTypeByKey(dataType)) problem('dataType', `Unknown data type ${dataType || '(missing)'}.`);
    else if (first !== undefined) problem('dataType', `${dataType} already has its setting in settings[${first}]: give each data type one entry.`);
    else entries.set(dataType, i);
    const schedule = raw?.syncSchedule ?? DEFAULT_SYNC_SCHEDULE_HOURS;
    if (!integer(1, MAX_SYNC_SCHEDULE_HOURS)(schedule)) problem('syncSchedule', `syncSchedule must be a whole number of hours from 1 to ${MAX_SYNC_SCHEDULE_HOURS}.`);
    const setting: SyncSetting = {
      dataType,
      fetchOnFirstLink: raw?.fetchOnFirstLink === true,
      syncSchedule: typeof schedule === 'number' ? schedule : DEFAULT_SYNC_SCHEDULE_HOURS,
      syncOrder: typeof raw?.syncOrder === 'number' ? raw.syncOrder : i,
    };
    for (const [field, check, rule] of OPTIONAL) {
      const value = raw?.[field];
      if (value !== undefined && value !== null && !check(value)) problem(field, `${field} must be ${rule}.`);
    }
    // Any value that failed its check makes the whole request a 400 below, so what is kept here passed.
    if (raw?.syncFromUtc != null) setting.syncFromUtc = raw.syncFromUtc as string;
    if (raw?.syncFromWindow != null) setting.syncFromWindow = raw.syncFromWindow as number;
    if (raw?.monthsToSync != null) setting.monthsToSync = raw.monthsToSync as number;
    if (raw?.isLocked != null) setting.isLocked = raw.isLocked as boolean;
    return setting;
  });
  failIfAny(items, errors.invalidSyncSettings);
  if (client.plan === 'Free' && settings.some((s) => s.syncSchedule < MIN_FREE_SCHEDULE_HOURS)) throw errors.syncScheduleNotAllowed();
  return settings;
}

export function registerSyncSettingsRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;
  const companyView = async (request: FastifyRequest) => {
    const company = await ownedCompany(ctx, request);
    return { companyId: company.id, ...(await effectiveSettings(store, company.client_id, company.id)) };
  };

  defineRoute(app, '/profile/syncSettings', {
    GET: async (request) => ({ clientId: request.auth.client.id, ...(await effectiveSettings(store, request.auth.client.id)) }),
    // As the public API: 204 and no body; GET reads the settings back.
    POST: withBody(async (request, reply) => {
      const client = request.auth.client;
      await store.writeSettings(client.id, '', parseSettings(objectBody(request), client, 'clientId'));
      return reply.code(204).send();
    }),
  });

  defineRoute(app, '/companies/:companyId/syncSettings', {
    GET: async (request) => companyView(request),
    POST: withBody(async (request, reply) => {
      // The company is checked in the transaction that writes its settings, so it cannot go in between.
      await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        // The plan that counts is the company owner's, also when an admin key sets it.
        await tx.writeSettings(company.client_id, company.id, parseSettings(objectBody(request), (await tx.getClient(company.client_id))!, 'companyId'));
      });
      return reply.code(204).send();
    }),
  });
}
