// `ferry connections authorize --company ID --connection ID --tokens-file F|-`: hands a
// connection its existing platform tokens (token migration for one company). The file is
// one JSON object of the integration's token fields; `-` reads it from stdin. Tokens are
// never printed, not even in errors: the service names the bad keys, never their values.
import { ferryCommand, targetArgs } from '../../command-line.js';
import * as api from '../../../client/api.js';
import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printResult, type IO } from '../../io.js';
import type { ConnectionRecord } from '../../../client/wire.js';
import { examples, group, type Registrar } from '../../command.js';
import { connectionIdOf, connectionTarget, type ConnectionTargetOptions } from '../../connections/target.js';

export interface ConnectionsAuthorizeOptions extends ConnectionTargetOptions {
  tokensFile: string;
}

const SHAPE = 'one JSON object of the integration\'s token fields, e.g. {"accessToken":"…","refreshToken":"…","tenantId":"…"}';

export function register(program: Command, registrar: Registrar): void {
  connectionTarget(group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('authorize')
    .description('Give a connection its existing platform tokens (JSON object file, or - for stdin)'))
    .requiredOption('--tokens-file <file>', 'JSON object of token fields (see ferry integrations get KEY); - reads stdin')
    .addHelpText('after', examples(
      'ferry connections authorize --company COMPANY_ID --connection CONNECTION_ID --tokens-file tokens.json',
      'vault read -format=json secret/xero/acme | jq .data | ferry connections authorize --company COMPANY_ID --connection CONNECTION_ID --tokens-file -',
      'ferry sync COMPANY_ID    # then fetch its data: nothing is fetched on link',
    ))
    .action(registrar.action(runConnectionsAuthorize));
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The token object from the file or stdin; never puts any of its content in an error. */
export async function readTokens(file: string, io: IO): Promise<Record<string, unknown>> {
  const source = file === '-' ? 'stdin' : file;
  let text: string;
  if (file === '-') {
    if ((io.stdin as { isTTY?: boolean }).isTTY) io.err('Paste the token JSON object, then press Ctrl-D.', { force: true });
    text = await readAll(io.stdin);
  } else {
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`Cannot read --tokens-file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`, `It should hold ${SHAPE}.`);
    }
    try {
      if ((statSync(file).mode & 0o077) !== 0) io.err(`note: ${file} holds tokens and is readable by other users; chmod 600 it.`);
    } catch {
      // stat failing right after a read is not worth stopping for
    }
  }
  text = text.replace(/^\uFEFF/, '').trim();
  if (text === '') throw new UsageError(`--tokens-file ${source} is empty.`, `It should hold ${SHAPE}.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, and the text is tokens.
    const looksCsv = !text.startsWith('{') && !text.startsWith('[') && text.split('\n')[0]!.includes(',');
    throw new UsageError(
      `--tokens-file ${source} is not valid JSON.`,
      looksCsv ? `It looks like CSV. For a CSV of tokens use ferry migrate tokens FILE; authorize takes ${SHAPE}.` : `It should hold ${SHAPE}.`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = Array.isArray(value) ? 'a JSON array' : value === null ? 'null' : `a JSON ${typeof value}`;
    throw new UsageError(
      `--tokens-file ${source} holds ${what}, not an object.`,
      Array.isArray(value) ? `Give one connection's tokens as ${SHAPE}; for many companies use ferry migrate tokens.` : `It should hold ${SHAPE}.`,
    );
  }
  return value as Record<string, unknown>;
}

export async function runConnectionsAuthorize(options: ConnectionsAuthorizeOptions, ctx: CommandContext, args: string[]): Promise<void> {
  const connectionId = connectionIdOf(options, args, targetArgs(ctx.flags));
  const tokens = await readTokens(options.tokensFile, ctx.io);
  const { client } = await ctx.connect();
  let connection: ConnectionRecord;
  try {
    connection = await api.authorizeConnection(client, options.company, connectionId, tokens, ctx.signal);
  } catch (err) {
    const { ApiRequestError } = await import('../../../client/errors.js');
    const integrationKey = async (): Promise<string | undefined> => {
      try {
        return (await api.connection(client, options.company, connectionId, ctx.signal)).integrationKey;
      } catch {
        return undefined; // keep the generic hint
      }
    };
    if (err instanceof ApiRequestError && err.status === 400) {
      const key = (await integrationKey()) ?? 'KEY';
      const rejected = err.validation.some((item) => item.validatorName === 'PlatformVerification');
      Object.assign(err, {
        hint: rejected
          ? `The platform refused these tokens (expired, revoked or for another app?). Export fresh ones and retry; the connection is unchanged. Fields: ferry integrations get ${key}`
          : `The connection is unchanged. Token fields for this platform: ferry integrations get ${key} (or ferry templates show ${key}).`,
      });
    } else if (err instanceof ApiRequestError && err.status === 403) {
      // Whether the platform is managed-only is ferry's own knowledge of it, not the wording of the 403.
      const key = await integrationKey();
      const { integrationByKey } = await import('../../../platforms/registry.js');
      if (key && integrationByKey(key)?.migrationRoute === 'managed') {
        Object.assign(err, { hint: 'This platform is migrated by the support team: ferry managed init (admin key).' });
      }
    }
    throw err;
  }
  const { io } = ctx;
  printResult(io, connection, () => {
    io.err(`Authorized connection ${connection.id} (${connection.platformName}): ${connection.status}.`);
    io.err(`No data is fetched until a sync runs: ${ferryCommand(['sync', options.company], targetArgs(ctx.flags))}`);
  });
}
