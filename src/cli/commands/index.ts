// Every command's register function, in help order. Each command file imports its heavy
// dependencies lazily inside its run function, so `ferry --help` stays fast.
import type { Command } from 'commander';
import type { Registrar } from '../command.js';
import * as adminBackup from './admin/backup.js';
import * as clientsCreate from './admin/clients/create.js';
import * as clientsList from './admin/clients/list.js';
import * as keysCreate from './admin/keys/create.js';
import * as keysList from './admin/keys/list.js';
import * as keysRevoke from './admin/keys/revoke.js';
import * as doctor from './doctor.js';
import * as login from './login.js';
import * as whoami from './whoami.js';
import * as legacyRefresh from './sandbox/tenants/legacy-refresh.js';
import * as sandboxSettings from './sandbox/settings.js';
import * as sandboxServe from './sandbox/serve.js';
import * as tenantsCreate from './sandbox/tenants/create.js';
import * as tenantsList from './sandbox/tenants/list.js';
import * as appsCreate from './sandbox/apps/create.js';
import * as appsList from './sandbox/apps/list.js';
import * as callbacksAdd from './sandbox/apps/callbacks/add.js';
import * as callbacksRemove from './sandbox/apps/callbacks/remove.js';
import * as migrateTokens from './migrate/tokens.js';
import * as serve from './serve.js';
import * as worker from './worker.js';
import * as companiesCreate from './companies/create.js';
import * as companiesList from './companies/list.js';
import * as companiesGet from './companies/get.js';
import * as companiesDelete from './companies/delete.js';
import * as connectionsCreate from './connections/create.js';
import * as connectionsList from './connections/list.js';
import * as connectionsGet from './connections/get.js';
import * as connectionsUnlink from './connections/unlink.js';
import * as connectionsDelete from './connections/delete.js';
import * as connectionsAuthorize from './connections/authorize.js';
import * as integrationsList from './integrations/list.js';
import * as integrationsGet from './integrations/get.js';
import * as templatesList from './templates/list.js';
import * as templatesShow from './templates/show.js';
import * as webhooksCreate from './webhooks/create.js';
import * as webhooksList from './webhooks/list.js';
import * as webhooksDelete from './webhooks/delete.js';
import * as webhooksDeliveries from './webhooks/deliveries.js';
import * as webhooksReplay from './webhooks/replay.js';
import * as webhooksTest from './webhooks/test.js';
import * as webhooksEvents from './webhooks/events.js';
import * as listen from './listen.js';
import * as sync from './sync.js';
import * as status from './status.js';
import * as push from './push.js';
import * as exportData from './export.js';
import * as managedInit from './managed/init.js';
import * as managedStatus from './managed/status.js';
import * as managedRun from './managed/run.js';
import * as managedStep from './managed/step.js';
import * as managedReport from './managed/report.js';
import * as check from './check.js';
import * as demo from './demo.js';

export const COMMANDS: Array<(program: Command, registrar: Registrar) => void> = [
  serve.register,
  worker.register,
  login.register,
  whoami.register,
  doctor.register,
  migrateTokens.register,
  clientsCreate.register,
  clientsList.register,
  keysCreate.register,
  keysList.register,
  keysRevoke.register,
  adminBackup.register,
  tenantsCreate.register,
  tenantsList.register,
  legacyRefresh.register,
  appsCreate.register,
  appsList.register,
  callbacksAdd.register,
  callbacksRemove.register,
  sandboxSettings.register,
  sandboxServe.register,
  companiesCreate.register,
  companiesList.register,
  companiesGet.register,
  companiesDelete.register,
  connectionsCreate.register,
  connectionsList.register,
  connectionsGet.register,
  connectionsUnlink.register,
  connectionsDelete.register,
  connectionsAuthorize.register,
  integrationsList.register,
  integrationsGet.register,
  templatesList.register,
  templatesShow.register,
  webhooksCreate.register,
  webhooksList.register,
  webhooksDelete.register,
  webhooksDeliveries.register,
  webhooksReplay.register,
  webhooksTest.register,
  webhooksEvents.register,
  listen.register,
  sync.register,
  status.register,
  push.register,
  exportData.register,
  managedInit.register,
  managedStatus.register,
  managedRun.register,
  managedStep.register,
  managedReport.register,
  check.register,
  demo.register,
];
