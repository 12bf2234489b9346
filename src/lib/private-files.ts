// The data dir holds every client's records, key hashes and sealed tokens: only the
// owner may read it, whatever the umask and whatever an older version left behind.
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Creates `dir` (0700) or tightens it and every file and folder in it to 0700/0600.
 * Returns what it had to tighten, so the caller can say so once.
 */
function securePrivateDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  const tightened: string[] = [];
  const visit = (path: string, isDir: boolean) => {
    const mode = isDir ? DIR_MODE : FILE_MODE;
    if ((statSync(path).mode & 0o777) & ~mode) {
      chmodSync(path, mode);
      tightened.push(path);
    }
    if (!isDir) return;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory() || entry.isFile()) visit(join(path, entry.name), entry.isDirectory());
    }
  };
  visit(dir, true);
  return tightened;
}

/**
 * Creates `file` 0600 if it does not exist, before a database opens it: SQLite gives its
 * -wal and -shm files the database file's mode.
 */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', FILE_MODE));
  chmodSync(file, FILE_MODE);
}

/** securePrivateDir, telling `notice` once what it tightened (nothing on a fresh or already private dir). */
export function privateDataDir(dir: string, notice?: (message: string) => void): void {
  const tightened = securePrivateDir(dir);
  if (tightened.length > 0) {
    notice?.(`tightened permissions in ${dir}: ${tightened.length} ${tightened.length === 1 ? 'entry' : 'entries'} readable by others are now owner-only (folders 0700, files 0600)`);
  }
}
