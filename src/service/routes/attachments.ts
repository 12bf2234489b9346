// Attachments of synced records, under a connection as the public API has them: list, get
// and download at …/data/{dataPath}/{recordId}/attachments, upload at
// …/push/{dataType}/{recordId}/attachment (or /attachments: the public API spells it both
// ways, by data type); and, ferry's own, DELETE …/attachments/{attachmentId}, so an
// account can free space within its quota. The service keeps the files itself (store:
// attachments); the record must be in the connection's visible snapshot of its data set to
// read or add files, not to delete them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { isoSeconds } from '../../lib/clock.js';
import { hasAttachments } from '../../platforms/attachments.js';
import { dataTypeByKey, dataTypeByPath, type DataType } from '../../platforms/data-types.js';
import { MAX_ATTACHMENTS_PER_RECORD } from '../../platforms/limits.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { params } from '../http/body.js';
import { contentDisposition, wantsOctetStream } from '../http/download.js';
import { defineRoute, withBody } from '../http/route.js';
import { discardStaged } from '../uploads/staged-upload.js';
import { declaredFileSize, readUpload, registerUploadParsers } from '../uploads/upload-body.js';
import type { AttachmentBody, AttachmentRow, RecordRef } from '../store/attachments.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionRow } from '../store/connections.js';
import { ownedCompanyConnection } from './connections.js';
import { readableGeneration } from './data.js';

const DATA_BASE = '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId/attachments';
const PUSH_BASE = '/companies/:companyId/connections/:connectionId/push/:dataType/:recordId';

/** The public API's Attachment. */
export function attachmentRecord(row: AttachmentRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.file_name,
    contentType: row.content_type,
    fileSize: row.size,
    dateCreated: row.created,
    includeWhenSent: false,
  };
}

/** The bytes as the reply sends them: a file is streamed. */
async function replyBody(body: AttachmentBody): Promise<Buffer | NodeJS.ReadableStream> {
  return 'bytes' in body ? body.bytes : (await open(body.file)).createReadStream();
}

export function registerAttachmentRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  defineRoute(app, DATA_BASE, {
    GET: async (request) => ({ attachments: (await store.listAttachments(await readTarget(ctx, request))).map(attachmentRecord) }),
  });

  defineRoute(app, `${DATA_BASE}/:attachmentId`, {
    GET: async (request) => attachmentRecord(await attachmentOf(ctx, request)),
    // The record need not be in the snapshot any more: its files still count against the quota.
    DELETE: async (request, reply: FastifyReply) => {
      const { connection, dataType, recordId } = await target(ctx, request, params(request).dataPath ?? '');
      const { attachmentId = '' } = params(request);
      if (!(await store.deleteAttachment({ connectionId: connection.id, dataType: dataType.key, recordId }, attachmentId))) {
        throw errors.attachmentNotFound(attachmentId, dataType.key, recordId);
      }
      return reply.code(204).send();
    },
  });

  defineRoute(app, `${DATA_BASE}/:attachmentId/download`, {
    GET: async (request, reply: FastifyReply) => download(ctx, request, reply),
  });

  // Its own scope: the multipart and raw-file parsers apply to these two paths and no others.
  void app.register(async (scope) => {
    await registerUploadParsers(scope);
    const upload = withBody(async (request: FastifyRequest) => uploadAttachment(ctx, request));
    defineRoute(scope, `${PUSH_BASE}/attachment`, { POST: upload });
    defineRoute(scope, `${PUSH_BASE}/attachments`, { POST: upload });
  });
}

/** The account's quota and the files a record may have. */
const limitsOf = (ctx: ServiceContext) => ({ quotaBytes: ctx.attachmentQuota, perRecord: MAX_ATTACHMENTS_PER_RECORD });

/** The connection (the caller's) with its company, a data type that has attachments on its platform, and the record id. */
async function target(ctx: ServiceContext, request: FastifyRequest, given: string): Promise<{ company: CompanyRow; connection: ConnectionRow; dataType: DataType; recordId: string }> {
  const { company, connection } = await ownedCompanyConnection(ctx, request);
  // Looked up at request time by the read path (or, for pushes, the key): types added later need nothing here.
  const dataType = dataTypeByPath(given) ?? dataTypeByKey(given);
  if (!dataType) throw errors.unknownDataType(given);
  if (!hasAttachments(dataType.key)) throw errors.noAttachments(dataType.key);
  const integration = integrationByKey(connection.integration_key);
  if (!integration?.dataTypes.includes(dataType.key)) throw errors.dataTypeNotSupported(dataType.key, integration?.name ?? connection.integration_key);
  const { recordId = '' } = params(request);
  return { company, connection, dataType, recordId };
}

/** 409 until the data set has synced; 404 when this connection's snapshot lacks the record. */
async function requireRecord(ctx: ServiceContext, connection: ConnectionRow, dataType: DataType, recordId: string): Promise<RecordRef> {
  const { store } = ctx;
  const generation = await readableGeneration(store, connection.company_id, dataType);
  if (!(await store.getRecord(connection.company_id, dataType.key, generation, recordId, connection.id))) {
    throw errors.connectionRecordNotFound(dataType.key, recordId, connection.id);
  }
  return { connectionId: connection.id, dataType: dataType.key, recordId };
}

async function readTarget(ctx: ServiceContext, request: FastifyRequest): Promise<RecordRef> {
  const { connection, dataType, recordId } = await target(ctx, request, params(request).dataPath ?? '');
  return requireRecord(ctx, connection, dataType, recordId);
}

async function attachmentOf(ctx: ServiceContext, request: FastifyRequest): Promise<AttachmentRow> {
  const record = await readTarget(ctx, request);
  const { attachmentId = '' } = params(request);
  const row = await ctx.store.getAttachment(record, attachmentId);
  if (!row) throw errors.attachmentNotFound(attachmentId, record.dataType, record.recordId);
  return row;
}

/** The file itself, with headers that keep a browser from running what an uploader called it. */
async function download(ctx: ServiceContext, request: FastifyRequest, reply: FastifyReply) {
  const row = await attachmentOf(ctx, request);
  const body = await ctx.store.attachmentBody(row.id);
  if (!body) throw errors.attachmentFileNotFound(row.id);
  // Opened before any header is set: an error answers with the envelope alone.
  const payload = await replyBody(body);
  return reply
    .type(wantsOctetStream(request) ? 'application/octet-stream' : row.content_type)
    .header('Content-Length', row.size)
    .header('Content-Disposition', contentDisposition(row.file_name))
    // The stored type is the uploader's word: never let a browser sniff or run it.
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'; sandbox")
    .header('ETag', `"${row.sha256}"`)
    .send(payload);
}

/** Checks the limits before reading the body, then stores the file (the limits checked again as it is stored). */
async function uploadAttachment(ctx: ServiceContext, request: FastifyRequest) {
  const { store } = ctx;
  const limits = limitsOf(ctx);
  const { company, connection, dataType, recordId } = await target(ctx, request, params(request).dataType ?? '');
  if (connection.status !== 'Linked') {
    throw errors.pushNotLinked(connection.status);
  }
  const record = await requireRecord(ctx, connection, dataType, recordId);
  // Refused before the body is read when the limits already say no: a full record, or an
  // account with no room for the declared size (or for anything, when no size is declared).
  if ((await store.listAttachments(record)).length >= limits.perRecord) throw errors.tooManyAttachments(limits.perRecord);
  const used = await store.attachmentBytesUsed(company.client_id);
  const declared = declaredFileSize(request);
  if (used + (declared ?? 1) > limits.quotaBytes) throw errors.attachmentQuotaExceeded(limits.quotaBytes, used, declared);
  // Only now is the body read: every refusal above cost the client no upload.
  const upload = await readUpload(request, ctx.uploadDir);
  try {
    return await storeUpload(ctx, company, connection, record, upload);
  } finally {
    // Moved into place or read into the row by now, or refused: nothing of it stays here.
    await discardStaged(upload.file);
  }
}

async function storeUpload(
  ctx: ServiceContext, company: CompanyRow, connection: ConnectionRow, record: RecordRef, { file, fileName, contentType }: Awaited<ReturnType<typeof readUpload>>,
): Promise<Record<string, unknown>> {
  const limits = limitsOf(ctx);
  const stored = await ctx.store.transaction(async (tx) => {
    // The connection may have gone while the file arrived.
    if (!(await tx.getConnection(connection.company_id, connection.id))) throw errors.connectionNotFound(connection.company_id, connection.id);
    return tx.insertAttachment({
      id: randomUUID(),
      client_id: company.client_id,
      company_id: connection.company_id,
      connection_id: connection.id,
      data_type: record.dataType,
      record_id: record.recordId,
      file_name: fileName,
      content_type: contentType,
      size: file.size,
      sha256: file.sha256,
      created: isoSeconds(ctx.clock.now()),
    }, file.path, limits);
  });
  if ('row' in stored) return attachmentRecord(stored.row);
  throw stored.refused === 'quota' ? errors.attachmentQuotaExceeded(limits.quotaBytes, stored.usedBytes, file.size) : errors.tooManyAttachments(limits.perRecord);
}
