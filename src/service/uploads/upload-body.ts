// Reading an attachment upload. Three forms are taken:
//   - multipart/form-data with one file part (any field name; the part's filename and
//     Content-Type are the file's): browsers, curl -F, undici's FormData;
//   - multipart/form-data as the public accounting SDK sends it: no file part, the content
//     in a field with an empty name, the name in a field `requestBody` (sdk-upload-content.ts);
//   - any other Content-Type: the body is the file itself, that Content-Type is the file's,
//     and its name is the `fileName` query parameter (curl --data-binary).
// A type that says nothing (none, application/octet-stream, curl's default form type) is
// taken from the name's extension. Nothing reads the body until the route has checked the
// path, so a refused upload costs no buffering. The file is written to a staged file as it
// arrives (staged-upload.ts), at most MAX_ATTACHMENT_BYTES of it: past that reading stops
// and the 400 goes out at once, closing the connection (http/incoming.ts) instead of
// reading the rest. Only the SDK's form is decoded in memory, since which reading of it
// holds is known only at its end.
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { mediaTypeForName, UNKNOWN_MEDIA_TYPE } from '../../lib/media-types.js';
import { attachmentNameProblem, MAX_ATTACHMENT_BYTES } from '../../platforms/limits.js';
import { ApiError, errors } from '../errors.js';
import { queryOf } from '../http/body.js';
import { SdkContentDecoder } from './sdk-upload-content.js';
import { discardStaged, eachChunk, stageUpload, type Staged, type StagedFile } from './staged-upload.js';

export interface Upload {
  fileName: string;
  contentType: string;
  /** The bytes, in a file of `dir` (readUpload's); the caller removes it when done. */
  file: StagedFile;
}

/**
 * Where busboy stops passing a file part on: room for the SDK's decimal form ("255," a
 * byte) of a file one byte over the limit, so that one is still measured exactly. Below it
 * every part is counted; only MAX_ATTACHMENT_BYTES are ever kept.
 */
const MAX_PART_BYTES = 4 * (MAX_ATTACHMENT_BYTES + 1);
/** Room for a multipart body's boundaries, part headers and small fields around the file. */
const MULTIPART_OVERHEAD = 1024 * 1024;
const MAX_FIELD_BYTES = 16 * 1024;
const MAX_FIELDS = 16;
/** The SDK's field with the file name. */
const SDK_NAME_FIELD = 'requestBody';
/** Types that tell nothing of the file: curl --data-binary sends the form type unless told. */
const UNINFORMATIVE_TYPES = new Set([UNKNOWN_MEDIA_TYPE, 'application/x-www-form-urlencoded']);
/** type/subtype of RFC 6838 (restricted names); parameters are not kept. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/**
 * The body parsers of the upload routes, for the encapsulated scope that holds them only:
 * the service's other routes keep their JSON parser and limits.
 */
export async function registerUploadParsers(scope: FastifyInstance): Promise<void> {
  scope.removeAllContentTypeParsers();
  await scope.register(multipart, {
    // busboy's own guard: past it a file part's rest is dropped uncounted and the part flagged truncated.
    limits: { fileSize: MAX_PART_BYTES, files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + 1 },
    throwFileSizeLimit: false,
    // The name as sent: a path in it is refused, not silently cut to its last segment.
    preservePath: true,
    // The SDK's unnamed content field is streamed like a file, never gathered as a field.
    isPartAFile: (fieldName, contentType, fileName) => fileName !== undefined || contentType === UNKNOWN_MEDIA_TYPE || fieldName === '',
  });
  // Any other type is the raw file: handed to the route unread, as a stream.
  scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}

/** The uploaded file, checked (one file, named, not empty, within the size limit) and staged in `dir`. */
export async function readUpload(request: FastifyRequest, dir: string): Promise<Upload> {
  return request.isMultipart() ? readMultipart(request, dir) : readRaw(request, dir);
}

function declaredLength(request: FastifyRequest): number | undefined {
  const value = request.headers['content-length'];
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** The file's size as declared before its body is read: a raw upload's Content-Length (a multipart body's length says little of its file's). */
export function declaredFileSize(request: FastifyRequest): number | undefined {
  return request.isMultipart() ? undefined : declaredLength(request);
}

/** The type as sent when it is a well-formed one that says something; else the name's. */
function mediaType(value: string | undefined, fileName: string): string {
  const type = value?.split(';')[0]?.trim().toLowerCase() ?? '';
  return MEDIA_TYPE.test(type) && !UNINFORMATIVE_TYPES.has(type) ? type : mediaTypeForName(fileName);
}

function checkedName(name: string | undefined): string {
  if (name === undefined) {
    throw errors.fileNameMissing();
  }
  const problem = attachmentNameProblem(name);
  if (problem) throw errors.badFileName(problem);
  return name;
}

/** The staged file, refused (and removed) when empty. */
async function checkedFile(staged: Staged): Promise<StagedFile> {
  if (staged.size === 0) {
    await discardStaged(staged.file);
    throw errors.fileEmpty();
  }
  return staged.file!;
}

async function readRaw(request: FastifyRequest, dir: string): Promise<Upload> {
  const given = queryOf(request).fileName;
  const fileName = checkedName(Array.isArray(given) ? given[0] : given);
  const declared = declaredLength(request);
  // Refused before a byte is read (the connection is closed rather than the body read).
  if (declared !== undefined && declared > MAX_ATTACHMENT_BYTES) throw errors.attachmentTooLarge(MAX_ATTACHMENT_BYTES, declared, 'file');
  // No body at all (Content-Length: 0) reaches the route as undefined.
  let staged: Staged = { size: 0 };
  if (request.body instanceof Readable) {
    try {
      staged = await stageUpload(dir, request.body, MAX_ATTACHMENT_BYTES);
    } catch {
      throw errors.uploadCutShort();
    }
  }
  if (staged.over) throw errors.attachmentTooLarge(MAX_ATTACHMENT_BYTES, staged.size, 'file');
  return { fileName, contentType: mediaType(request.headers['content-type'], fileName), file: await checkedFile(staged) };
}

interface FilePart {
  fileName: string | undefined;
  /** undefined: the part had no type of its own (the SDK's field). */
  contentType: string | undefined;
  staged: Staged;
  truncated: boolean;
  damaged: boolean;
}

/** The SDK's content field, decoded from the text the SDK made of the bytes, then staged; `over` (its size so far) once past the limit. */
async function readSdkContent(stream: Readable, dir: string): Promise<{ staged: Staged; damaged: boolean }> {
  const decoder = new SdkContentDecoder(MAX_ATTACHMENT_BYTES);
  const ended = await eachChunk(stream, (chunk) => {
    decoder.push(chunk);
    return decoder.size <= MAX_ATTACHMENT_BYTES;
  });
  if (!ended) return { staged: { size: decoder.size, over: true }, damaged: false };
  const { chunks, size, damaged } = decoder.finish();
  // Which reading holds is known only at the end: over the limit then, nothing was kept.
  if (size > MAX_ATTACHMENT_BYTES) return { staged: { size, over: true }, damaged };
  return { staged: await stageUpload(dir, chunks, MAX_ATTACHMENT_BYTES), damaged };
}

async function readMultipart(request: FastifyRequest, dir: string): Promise<Upload> {
  const declared = declaredLength(request);
  if (declared !== undefined && declared > MAX_PART_BYTES + MULTIPART_OVERHEAD) {
    throw errors.attachmentTooLarge(MAX_ATTACHMENT_BYTES, declared, 'request body');
  }
  // Count what arrives, for the size error should busboy's own guard truncate a part (it drops the rest uncounted).
  // Paused first, so this listener alone does not start the flow before busboy is piped in.
  const raw = request.raw;
  let received = 0;
  raw.pause();
  raw.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  let file: FilePart | undefined;
  let sdkName: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === SDK_NAME_FIELD && typeof part.value === 'string') sdkName = part.value;
        continue;
      }
      if (part.fieldname === '' && part.filename === undefined) {
        const content = await readSdkContent(part.file, dir);
        file = { fileName: undefined, contentType: undefined, ...content, truncated: part.file.truncated };
      } else {
        const staged = await stageUpload(dir, part.file, MAX_ATTACHMENT_BYTES);
        file = { fileName: part.filename, contentType: part.mimetype, staged, truncated: part.file.truncated, damaged: false };
      }
      // Refused as soon as the file passes the limit: the rest of the body is never read.
      if (file.staged.over) throw errors.attachmentTooLarge(MAX_ATTACHMENT_BYTES, file.staged.size, 'file');
    }
  } catch (err) {
    await discardStaged(file?.staged.file);
    throw multipartError(err);
  }
  try {
    return { ...checkedPart(file, sdkName, received), file: await checkedFile(file!.staged) };
  } catch (err) {
    await discardStaged(file?.staged.file);
    throw err;
  }
}

/** The file part's name and type, or why it is refused. */
function checkedPart(file: FilePart | undefined, sdkName: string | undefined, received: number): Omit<Upload, 'file'> {
  if (!file) {
    throw errors.fileMissing();
  }
  if (file.truncated) throw errors.attachmentTooLarge(MAX_ATTACHMENT_BYTES, received, 'request body');
  const fileName = checkedName(file.fileName ?? sdkName);
  if (file.damaged) {
    throw errors.fileSentAsText();
  }
  return { fileName, contentType: mediaType(file.contentType, fileName) };
}

/** The parser's errors in the service's words. */
function multipartError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  switch ((err as { code?: string } | null)?.code) {
    case 'FST_FILES_LIMIT':
      return errors.tooManyFileParts();
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return errors.tooManyParts(MAX_FIELDS);
    default:
      return errors.multipartUnreadable();
  }
}
