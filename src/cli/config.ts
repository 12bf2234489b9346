// Saved targets ("profiles") in $XDG_CONFIG_HOME/ferry/config.json, mode 0600, and the
// default data dir under $XDG_DATA_HOME.
import { replaceFile } from '../lib/atomic-file.js';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Profile {
  baseUrl: string;
  apiKey?: string;
  clientId?: string;
}

export interface Config {
  defaultProfile?: string;
  profiles: Record<string, Profile>;
}

export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'ferry', 'config.json');
}

export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'ferry');
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  const file = configPath(env);
  if (!existsSync(file)) return { profiles: {} };
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Config>;
  return { ...parsed, profiles: parsed.profiles ?? {} };
}

/** Written to a temp file and renamed, so a crash never leaves half a config. */
export function writeConfig(env: NodeJS.ProcessEnv, config: Config): string {
  const file = configPath(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  replaceFile(file, `${JSON.stringify(config, null, 2)}\n`, 0o600);
  chmodSync(file, 0o600);
  return file;
}
