// Attachments of synced records, under a connection as the public API has them: list, get
// and download at …/data/{dataPath}/{recordId}/attachments, upload at
// …/push/{dataType}/{recordId}/attachment (or /attachments: the public API spells it both
// ways, by data type). The service keeps the files itself (store: attachments); the record
// must be in the connection's visible snapshot of its data set.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash, randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/clock.js';
import { hasAttachments } from '../../platforms/attachments.js';
import { dataTypeByKey, dataTypeByPath, type DataType } from '../../platforms/data-types.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { params } from '../http/body.js';
import { contentDisposition, wantsOctetStream } from '../http/download.js';
import { defineRoute } from '../http/route.js';
import { readUpload, registerUploadParsers } from '../http/upload-body.js';
import type { AttachmentRow, RecordRef } from '../store/attachments.js';
import type { ConnectionRow } from '../store/connections.js';
import { ownedConnection } from './connections.js';
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

export function registerAttachmentRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;

  /** The connection (the caller's), a data type that has attachments on its platform, and the record id. */
  const target = async (request: FastifyRequest, given: string): Promise<{ connection: ConnectionRow; dataType: DataType; recordId: string }> => {
    const connection = await ownedConnection(ctx, request);
    // Looked up at request time by the read path (or, for pushes, the key): types added later need nothing here.
    const dataType = dataTypeByPath(given) ?? dataTypeByKey(given);
    if (!dataType) throw errors.notFound(`Unknown data type ${given}.`);
    if (!hasAttachments(dataType.key)) throw errors.notFound(`${dataType.key} records have no attachments.`);
    const integration = integrationByKey(connection.integration_key);
    if (!integration?.dataTypes.includes(dataType.key)) throw errors.dataTypeNotSupported(dataType.key, integration?.name ?? connection.integration_key);
    const { recordId = '' } = params(request);
    return { connection, dataType, recordId };
  };

  /** 409 until the data set has synced; 404 when this connection's snapshot lacks the record. */
  const requireRecord = async (connection: ConnectionRow, dataType: DataType, recordId: string): Promise<RecordRef> => {
    const generation = await readableGeneration(store, connection.company_id, dataType);
    if (!(await store.getRecord(connection.company_id, dataType.key, generation, recordId, connection.id))) {
      throw errors.notFound(`No ${dataType.key} record ${recordId} for connection ${connection.id}.`);
    }
    return { connectionId: connection.id, dataType: dataType.key, recordId };
  };

  const readTarget = async (request: FastifyRequest): Promise<RecordRef> => {
    const { connection, dataType, recordId } = await target(request, params(request).dataPath ?? '');
    return requireRecord(connection, dataType, recordId);
  };

  const attachmentOf = async (request: FastifyRequest): Promise<AttachmentRow> => {
    const record = await readTarget(request);
    const { attachmentId = '' } = params(request);
    const row = await store.getAttachment(record, attachmentId);
    if (!row) throw errors.notFound(`Attachment ${attachmentId} not found for ${record.dataType} record ${record.recordId}.`);
    return row;
  };

  defineRoute(app, DATA_BASE, {
    GET: async (request) => ({ attachments: (await store.listAttachments(await readTarget(request))).map(attachmentRecord) }),
  });

  defineRoute(app, `${DATA_BASE}/:attachmentId`, {
    GET: async (request) => attachmentRecord(await attachmentOf(request)),
  });

  defineRoute(app, `${DATA_BASE}/:attachmentId/download`, {
    GET: async (request, reply: FastifyReply) => {
      const row = await attachmentOf(request);
      const content = await store.attachmentContent(row.id);
      if (!content) throw errors.notFound(`Attachment ${row.id} not found.`);
      return reply
        .type(wantsOctetStream(request) ? 'application/octet-stream' : row.content_type)
        .header('Content-Disposition', contentDisposition(row.file_name))
        // The stored type is the uploader's word: never let a browser sniff or run it.
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox")
        .header('ETag', `"${row.sha256}"`)
        .send(content);
    },
  });

  const upload = async (request: FastifyRequest) => {
    const { connection, dataType, recordId } = await target(request, params(request).dataType ?? '');
    if (connection.status !== 'Linked') {
      throw errors.badRequest(`The connection is ${connection.status}; only a Linked connection can push. Reauthorize it first.`);
    }
    const record = await requireRecord(connection, dataType, recordId);
    // Only now is the body read: every refusal above cost the client no upload.
    const file = await readUpload(request);
    const row = await store.transaction(async (tx) => {
      // The connection may have gone while the file arrived.
      if (!(await tx.getConnection(connection.company_id, connection.id))) throw errors.connectionNotFound(connection.company_id, connection.id);
      return tx.insertAttachment({
        id: randomUUID(),
        company_id: connection.company_id,
        connection_id: connection.id,
        data_type: record.dataType,
        record_id: record.recordId,
        file_name: file.fileName,
        content_type: file.contentType,
        size: file.content.length,
        sha256: createHash('sha256').update(file.content).digest('hex'),
        created: isoSeconds(clock.now()),
      }, file.content);
    });
    return attachmentRecord(row);
  };

  // Its own scope: the multipart and raw-file parsers apply to these two paths and no others.
  void app.register(async (scope) => {
    await registerUploadParsers(scope);
    defineRoute(scope, `${PUSH_BASE}/attachment`, { POST: upload });
    defineRoute(scope, `${PUSH_BASE}/attachments`, { POST: upload });
  });
}
