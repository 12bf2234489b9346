// What ferry knows of an integration, whatever the target: the bundled registry
// (platforms/registry.ts, the module the service uses too) gives the token fields, the
// migration route and the data types; a target whose /integrations records carry ferry's
// extension fields (ferry's own service) may refine them. The public API's records carry
// neither, and nothing here needs them to.
import * as api from '../client/api.js';
import type { ApiClient } from '../client/client.js';
import { integrationByKey } from '../platforms/registry.js';
import type { MigrationRoute } from '../platforms/types.js';

export interface KnownTokenField {
  name: string;
  required: boolean;
  description: string;
}

export interface KnownIntegration {
  key: string;
  name: string;
  migrationRoute: MigrationRoute;
  tokenFields: KnownTokenField[];
  dataTypes: string[];
  /** False: neither the bundled registry nor the target says what this integration needs. */
  known: boolean;
}

/** A target's integration record: the public fields, and ferry's extensions where it has them. */
export interface TargetIntegration {
  key: string;
  name?: string;
  migrationRoute?: string;
  tokenFields?: unknown;
  dataTypes?: unknown;
}

const ROUTES = new Set<string>(['self-service', 'managed']);

function tokenFieldsOf(value: unknown): KnownTokenField[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const fields = value.filter((f): f is KnownTokenField => typeof f?.name === 'string');
  return fields.map((f) => ({ name: f.name, required: f.required !== false, description: typeof f.description === 'string' ? f.description : '' }));
}

function stringsOf(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** The bundled registry's knowledge of `record.key`, refined by the record's own extension fields. */
export function knowIntegration(record: TargetIntegration, tokenFieldsGiven?: string[]): KnownIntegration {
  const bundled = integrationByKey(record.key);
  const fields = tokenFieldsOf(record.tokenFields) ?? bundled?.tokenFields.map(({ name, required, description }) => ({ name, required, description }));
  const given = tokenFieldsGiven?.map((name) => ({ name, required: true, description: 'given with --token-fields' }));
  const route = typeof record.migrationRoute === 'string' && ROUTES.has(record.migrationRoute) ? (record.migrationRoute as MigrationRoute) : bundled?.migrationRoute;
  return {
    key: record.key,
    name: record.name ?? bundled?.name ?? record.key,
    migrationRoute: route ?? 'self-service',
    tokenFields: fields ?? given ?? [],
    dataTypes: stringsOf(record.dataTypes) ?? bundled?.dataTypes ?? [],
    known: fields !== undefined || given !== undefined,
  };
}

/** Every integration the target lists, with what ferry knows of each. `tokenFields`: --token-fields, for integrations ferry does not know. */
export async function targetIntegrations(client: ApiClient, signal?: AbortSignal, tokenFields?: string[]): Promise<KnownIntegration[]> {
  const records = await api.integrations<TargetIntegration>(client, signal);
  return records.map((record) => knowIntegration(record, tokenFields));
}

/** One integration by key, asked of the target once per key across many companies. */
export function integrationLookup(client: ApiClient, signal?: AbortSignal): (key: string) => Promise<KnownIntegration> {
  const lookup = api.integrationCache<TargetIntegration>(client, signal);
  return async (key) => knowIntegration(await lookup(key));
}

/** The target's record with ferry's knowledge filled in where the record lacks it (the record's own fields win). */
export function withKnowledge<T extends TargetIntegration>(record: T): T & Pick<KnownIntegration, 'migrationRoute' | 'tokenFields' | 'dataTypes'> {
  const known = knowIntegration(record);
  const merged: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  if (!ROUTES.has(String(merged.migrationRoute))) merged.migrationRoute = known.migrationRoute;
  if (!Array.isArray(merged.tokenFields)) merged.tokenFields = known.tokenFields;
  if (!Array.isArray(merged.dataTypes)) merged.dataTypes = known.dataTypes;
  return merged as unknown as T & Pick<KnownIntegration, 'migrationRoute' | 'tokenFields' | 'dataTypes'>;
}
