// `ferry admin backup --out FILE`: a consistent copy of the embedded SQLite service, taken
// while it serves and syncs (SQLite's online backup API), its attachments beside it. On
// PostgreSQL the database is the operator's to back up: the command says to use pg_dump.
// It opens the data dir's database itself (through stack.ts), with no key and no service:
// a backup must work whether the service is up or not.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { CliError, EXIT, UsageError } from '../../errors.js';
import { resolveDataDir } from '../../globals.js';
import { printResult } from '../../io.js';
import { examples, group, type Registrar } from '../../command.js';

export interface BackupOptions {
  out: string;
  database?: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'admin', 'Accounts and API keys (admin key only)')
    .command('backup')
    .description('Copy the embedded SQLite service, online and consistent, to restore it later')
    .requiredOption('--out <file>', 'the copy of the database (a new file); attachments go to <file>.attachments/')
    .option('--database <url>', 'the service\'s PostgreSQL database (default FERRY_DATABASE_URL): not copied here, see pg_dump')
    .addHelpText('after', examples(
      'ferry admin backup --out /backups/ferry-$(date +%F).db --data-dir /var/lib/ferry',
      'ferry admin backup --out ferry.db.bak --json   # {"event":"backup","out":…,"bytes":…,"attachments":…}',
    ))
    .addHelpText('after', `The copy is one snapshot of the database (SQLite's online backup API), taken while
the service runs and syncs, checked with SQLite's quick_check and written 0600; the
attachments of that snapshot are linked (or copied) into <file>.attachments/. The
token-encryption key (<data-dir>/secret.key, --secret-key-file or FERRY_SECRET_KEY) is NOT
in it: keep a copy of the key apart from the backups, since a restore needs it and a
backup holding its own key would give away every token. To restore: copy <file> to
<data-dir>/ferry.db and <file>.attachments/ to <data-dir>/attachments/, put the key back,
and start \`ferry serve --data-dir <data-dir>\`. See docs/operations.md.

On PostgreSQL (--database or FERRY_DATABASE_URL) the command refuses: back up with pg_dump.
`)
    .action(registrar.action(runBackup));
}

export async function runBackup(options: BackupOptions, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  if (options.database ?? (io.env.FERRY_DATABASE_URL || undefined)) {
    throw new UsageError('ferry admin backup copies the embedded SQLite service; a PostgreSQL database is backed up with pg_dump.',
      'pg_dump --format=custom --file ferry.dump "$FERRY_DATABASE_URL" (restore with pg_restore), and keep the token-encryption key apart: docs/operations.md');
  }
  const dataDir = resolveDataDir(ctx.flags, io.env);
  const out = resolve(options.out);
  // Loaded here, not at the top: `ferry --help` stays free of the service's modules.
  const { backupSqlite, BackupRefused } = await import('../../../stack.js');
  let copy;
  try {
    copy = await backupSqlite(dataDir, out);
  } catch (err) {
    if (err instanceof BackupRefused) throw new CliError(err.message, EXIT.usage, err.hint);
    throw new CliError(`The backup failed: ${(err as Error).message}`, EXIT.error);
  }
  const keyFile = join(dataDir, 'secret.key');
  const key = existsSync(keyFile) ? keyFile : undefined;
  const attachments = copy.attachments?.files ?? 0;
  printResult(io, { event: 'backup', out: copy.out, bytes: copy.bytes, attachments, ...(copy.attachments ? { attachmentsDir: copy.attachments.dir } : {}), ...(key ? { secretKey: key } : {}) }, () => {
    io.out(copy.out);
    io.err(`backed up ${dataDir}: ${copy.bytes} bytes${copy.attachments ? `, ${attachments} attachment${attachments === 1 ? '' : 's'} in ${copy.attachments.dir}` : ''}`);
    io.err(`the token-encryption key is not in the backup: keep a copy of ${key ?? 'the --secret-key-file or FERRY_SECRET_KEY the service runs with'} apart from it; a restore needs it`);
  });
}
