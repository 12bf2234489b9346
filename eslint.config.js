import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Files matching `files` may not import from the folders named in `forbidden`. */
function layer(files, forbidden, message) {
  const group = forbidden.flatMap((dir) => [`**/${dir}/*`, `**/${dir}/**`]);
  return { files: [files], rules: { 'no-restricted-imports': ['error', { patterns: [{ group, message }] }] } };
}

const CLI_TO_SERVERS = {
  target: './src/cli', from: ['./src/service', './src/sandbox'],
  message: 'the command line starts the service and the sandbox through src/stack.ts (startStack, startWorker, startSandbox).',
};

// The store's modules (the contract in store/, SQLite in store/sqlite/, PostgreSQL in
// store/pg/): the rest of the service imports their types, and these few for their values.
const STORE_MODULES = ['**/store/*.js', '**/store/sqlite/**', '**/store/pg/**'];
const STORE_VALUES = ['!**/store/store.js', '!**/store/integrations.js', '!**/store/unreachable.js', '!**/store/pull-status.js', '!**/store/pg/unavailable.js'];

export default tseslint.config(
  { ignores: ['dist/', '.dist-*/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // No import circles in src/: a module and what it imports form a tree, so each can be
    // read (and loaded) after what it stands on. no-cycle follows runtime imports only;
    // scripts/import-cycles.mjs (npm run lint) counts type-only imports too. Imports are
    // resolved as TypeScript does under NodeNext: './x.js' names ./x.ts.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  // A function a reader can hold at once: past 80 lines, cut it into named parts.
  {
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  // The command line reaches the service and the sandbox only through src/stack.ts (the
  // embedded target, cli/embedded.ts, starts it), and no command imports another: what two
  // commands share lives in cli/<topic>/. Paths are resolved, so cli/sandbox/ is not src/sandbox/.
  {
    files: ['src/cli/**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [CLI_TO_SERVERS] }] },
  },
  {
    files: ['src/cli/commands/**/*.ts'],
    ignores: ['src/cli/commands/index.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [CLI_TO_SERVERS, {
      target: './src/cli/commands', from: './src/cli/commands',
      message: 'a command imports no other command: move what both need into src/cli/<topic>/ (or the engine into src/ops/).',
    }] }] },
  },
  // Layering: the sandbox and the service meet only in stack.ts; what both need lives in
  // platforms/ (what ferry knows of the platforms) and lib/ (small utilities).
  layer('src/sandbox/**/*.ts', ['service'], 'the sandbox imports platforms/ and lib/, never service/'),
  layer('src/service/**/*.ts', ['sandbox'], 'the service reaches the sandbox only over HTTP; shared knowledge goes in platforms/'),
  layer('src/{platforms,lib}/**/*.ts', ['service', 'sandbox', 'cli', 'ops', 'client'], 'platforms/ and lib/ stand below every half'),
  // The client side: commands (cli/) drive engines (ops/), which talk to the service through
  // client/. An engine knows nothing of the command line; the client nothing of either.
  layer('src/client/**/*.ts', ['cli', 'ops', 'service', 'sandbox'], 'client/ is the API layer under the engines and the commands'),
  {
    files: ['src/ops/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', {
      paths: [
        { name: 'commander', message: 'engines take their options as arguments; flags live in src/cli.' },
        { name: '@inquirer/prompts', message: 'engines ask through a callback; prompts live in src/cli.' },
        { name: 'ora', message: 'engines report progress through a callback; spinners live in src/cli.' },
      ],
    }],
    // By resolved path: ops/sandbox/ (an engine) is not src/sandbox/.
    'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [{
      target: './src/ops', from: ['./src/cli', './src/service', './src/sandbox'],
      message: 'engines take callbacks and throw OpError; the command line lives in cli/, and the service is reached through client/.',
    }] }] },
  },
  {
    // The store behind one interface: routes, workers and schedulers take the AsyncStore
    // (ctx.store) and may import the store modules' types, never their functions; SQL stays under store/.
    files: ['src/service/**/*.ts'],
    ignores: ['src/service/store/**'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'better-sqlite3', message: 'SQL lives under src/service/store/; add a Store method.' }],
        patterns: [
          { group: [...STORE_MODULES, ...STORE_VALUES], allowTypeImports: true, message: 'Use the Store interface (ctx.store); only the places that open a store import its implementation.' },
          { group: ['**/sandbox/*', '**/sandbox/**'], message: 'The service reaches the sandbox only over HTTP; shared knowledge goes in platforms/.' },
        ],
      }],
    },
  },
  {
    // Where a store is opened: the service, the worker process, and the threads that open their own handle.
    files: ['src/service/app-core.ts', 'src/service/app-background.ts', 'src/service/worker.ts', 'src/service/sync/worker-thread.ts', 'src/service/read-pool/reader-thread.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [
          { group: [...STORE_MODULES, ...STORE_VALUES, '!**/store/open-store.js', '!**/store/sqlite/db.js', '!**/store/sqlite/sqlite-store.js', '!**/store/sqlite/async-store.js'], allowTypeImports: true, message: 'Use the Store interface; open it with openStore (or sqliteAsyncStore / createSqliteStore in a thread of its own).' },
          { group: ['**/sandbox/*', '**/sandbox/**'], message: 'The service reaches the sandbox only over HTTP.' },
        ],
      }],
    },
  },
  {
    // The PostgreSQL driver, like SQL, stays under src/service/store/. A rule of its own
    // (not no-restricted-imports), so it holds whatever the layering rules above say.
    files: ['src/**/*.ts'],
    ignores: ['src/service/store/**'],
    rules: { 'no-restricted-syntax': ['error', ...['ImportDeclaration', 'ImportExpression', 'ExportAllDeclaration', 'ExportNamedDeclaration'].map((node) => ({
      selector: `${node}[source.value=/^pg(?![\\w.-])/]`,
      message: 'pg is imported only under src/service/store/; add a Store method.',
    }))] },
  },
  {
    // Tests read JSON bodies of many shapes; typing each one would only add casts.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
