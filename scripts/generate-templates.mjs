// Regenerates templates/migration/*.csv from the integration registry.
// Needs a build first (npm run build): it runs the compiled registry in dist/.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeMigrationTemplates } from '../dist/service/integrations/write-templates.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const written = writeMigrationTemplates(join(root, 'templates', 'migration'));
process.stdout.write(`wrote ${written.length} migration templates to templates/migration/\n`);
