// The options every command takes, and how they resolve: flag > env > profile > embedded default.
import { readFileSync, statSync } from 'node:fs';
import { readConfig, defaultDataDir, type Profile } from './config.js';
import { UsageError } from './errors.js';
import { ferryCommand } from './command-line.js';

export interface GlobalFlags {
  baseUrl?: string;
  profile?: string;
  apiKeyFile?: string;
  client?: string;
  dataDir?: string;
  json?: boolean;
  input?: boolean;
  color?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

export type TargetSpec =
  | { kind: 'remote'; baseUrl: string; apiKey: string; clientId?: string; source: string }
  | { kind: 'embedded'; dataDir: string; clientId?: string };

export function resolveDataDir(flags: GlobalFlags, env: NodeJS.ProcessEnv): string {
  const dir = flags.dataDir ?? env.FERRY_DATA_DIR ?? defaultDataDir(env);
  checkDataDir(dir, flags.dataDir ? '--data-dir' : env.FERRY_DATA_DIR ? 'FERRY_DATA_DIR' : 'The data dir');
  return dir;
}

/** A file where the data dir should be (or on its way) is a mistyped path: a usage error naming it, not a failed mkdir. */
export function checkDataDir(dir: string, source: string): void {
  let problem: string | undefined;
  try {
    if (!statSync(dir).isDirectory()) problem = 'is a file, not a directory';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') problem = 'passes through a file: it cannot be a directory';
  }
  if (problem) throw new UsageError(`${source} ${dir} ${problem}.`, 'Give the path of a directory (it is made if missing).');
}

function readKeyFile(path: string): string {
  try {
    const key = readFileSync(path, 'utf8').trim();
    if (!key) throw new UsageError(`The API key file ${path} is empty.`);
    return key;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`Cannot read the API key file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
}

export function resolveTarget(flags: GlobalFlags, env: NodeJS.ProcessEnv): TargetSpec {
  const profileName = flags.profile ?? env.FERRY_PROFILE;
  const config = readConfig(env);
  const chosen = profileName ?? config.defaultProfile;
  let profile: Profile | undefined;
  if (chosen !== undefined) {
    profile = config.profiles[chosen];
    if (!profile && profileName !== undefined) {
      const known = Object.keys(config.profiles);
      throw new UsageError(`No profile named ${profileName}.`, known.length ? `Saved profiles: ${known.join(', ')}.` : 'Save one with: ferry login --profile NAME --base-url URL');
    }
  }
  const clientId = flags.client ?? env.FERRY_CLIENT_ID ?? profile?.clientId;
  const baseUrl = flags.baseUrl ?? env.FERRY_BASE_URL ?? profile?.baseUrl;
  if (!baseUrl) {
    const spec: TargetSpec = { kind: 'embedded', dataDir: resolveDataDir(flags, env) };
    if (clientId) spec.clientId = clientId;
    return spec;
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url ${baseUrl} is not a URL.`, 'Example: --base-url http://127.0.0.1:8080');
  }
  const apiKey = flags.apiKeyFile ? readKeyFile(flags.apiKeyFile) : env.FERRY_API_KEY ?? profile?.apiKey;
  if (!apiKey) {
    throw new UsageError(`No API key for ${baseUrl}.`, `Give --api-key-file PATH, set FERRY_API_KEY, or save one with: ${ferryCommand(['login', '--base-url', baseUrl])}`);
  }
  const source = flags.baseUrl ? '--base-url' : env.FERRY_BASE_URL ? 'FERRY_BASE_URL' : `profile ${chosen}`;
  const spec: TargetSpec = { kind: 'remote', baseUrl, apiKey, source };
  if (clientId) spec.clientId = clientId;
  return spec;
}
