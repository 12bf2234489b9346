// The integration record of GET /integrations (API.md), as the CLI reads it.
export interface IntegrationRecord {
  key: string;
  name: string;
  sourceType: string;
  migrationRoute: 'self-service' | 'managed';
  tokenFields: Array<{ name: string; required: boolean; description: string }>;
  dataTypes: string[];
}
