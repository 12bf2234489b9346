// What every route needs, built once by createService().
import type { Clock } from './clock.js';
import type { TokenVerifier } from './integrations/verifier.js';
import type { Sealer } from './secrets.js';
import type { Db } from './store/db.js';

export interface ServiceContext {
  db: Db;
  clock: Clock;
  sealer: Sealer;
  verifier: TokenVerifier;
}
