// The sandbox platforms: emulated third-party accounting platforms for ferry's adapters,
// migrations and tests.
export { createSandbox, DEFAULT_ACCESS_TOKEN_TTL_SECONDS, type Sandbox, type SandboxOptions } from './app.js';
export {
  CREDENTIAL_ROLES, CURRENT_TENANT, INTERNAL_ACCESS_FIELD, INTERNAL_EXPIRY_FIELD, accessFieldOf, credentialHeader, credentialRoles,
  expiryFieldOf, type CredentialRoles,
} from '../platforms/credentials.js';
export { generateRecords, generatedCount } from './generate/records.js';
export type { Invoice, InvoiceStatus, LineItem } from './generate/invoices.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../platforms/paging.js';
export { MAX_INVOICES } from './routes/admin.js';
export { DEFAULT_SETTINGS, type PushMode, type SandboxSettings } from './settings.js';
export { REFRESH_TOKEN_TTL_SECONDS, type TokenState } from './tokens.js';
