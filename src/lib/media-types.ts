// The media type of a file from its name's extension, for uploads that do not say (or say
// only application/octet-stream, or curl's default form type). Only the types attachments
// commonly are; anything else stays application/octet-stream.
const BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  webp: 'image/webp',
  heic: 'image/heic',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  xml: 'application/xml',
  json: 'application/json',
  rtf: 'application/rtf',
  eml: 'message/rfc822',
  msg: 'application/vnd.ms-outlook',
  zip: 'application/zip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
};

export const UNKNOWN_MEDIA_TYPE = 'application/octet-stream';

export function mediaTypeForName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return UNKNOWN_MEDIA_TYPE;
  return BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()] ?? UNKNOWN_MEDIA_TYPE;
}
