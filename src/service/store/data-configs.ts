// The two kinds of data configuration both stores keep (sqlite/data-configs.ts, pg/settings.ts).

export type ConfigKind = 'supplemental' | 'custom';

/** Where each kind is kept: its table, and the column naming the data type (or custom identifier). */
export const CONFIG_TABLES: Record<ConfigKind, { table: string; key: string }> = {
  supplemental: { table: 'supplemental_configs', key: 'data_type' },
  custom: { table: 'custom_data_types', key: 'identifier' },
};
