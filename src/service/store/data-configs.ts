// The two kinds of data configuration both stores keep (sqlite/data-configs.ts, pg/settings.ts).

export type ConfigKind = 'supplemental' | 'custom';
