// The size limits of what clients send, in one place for the service (400 naming the
// field) and the command line (a row-level error before anything is written). The public
// API states the tag limits; the others are ferry's, chosen well above real data and far
// below what could hurt the service (docs/api.md, "Limits").

/** Company names, after removing disallowed characters. */
export const MAX_COMPANY_NAME = 255;
export const MAX_COMPANY_DESCRIPTION = 1000;
export const MAX_TAGS = 10;
export const MAX_TAG_KEY = 27;
export const MAX_TAG_VALUE = 100;
/** One token field's value: long JWTs are a few kilobytes. */
export const MAX_TOKEN_VALUE = 8192;
/** Companies a Free plan account may hold: the service refuses the next (402), the migration counts its headroom. */
export const FREE_PLAN_COMPANY_LIMIT = 50;
/** Any JSON request body. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Objects and arrays inside objects and arrays: records are a handful deep. */
export const MAX_JSON_DEPTH = 32;

/** Control characters (NUL, newlines, tabs…) cannot be part of a token: no platform issues them. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Unicode format characters (category Cf) show nothing themselves and some change what the
 * rest shows: U+202E (right-to-left override) makes `fdp.exe` read `exe.pdf`, U+200B hides
 * a difference between two names. No real name needs one.
 */
const FORMAT_CHARACTER = /\p{Cf}/u;

/** What is wrong with a name shown to people (company, file, profile), or undefined when it has no format character. */
export function formatCharacterProblem(value: string): string | undefined {
  const found = FORMAT_CHARACTER.exec(value)?.[0];
  if (found === undefined) return undefined;
  const code = found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `contains the invisible format character U+${code}, which can disguise what is shown (U+202E shows fdp.exe as exe.pdf)`;
}

/** What is wrong with a token value, or undefined when it is fine. */
export function tokenValueProblem(value: string): string | undefined {
  if (value.length > MAX_TOKEN_VALUE) return `is longer than ${MAX_TOKEN_VALUE} characters`;
  if (hasControlCharacter(value)) return 'contains a control character (NUL, newline, tab…); copy the token again without it';
  return undefined;
}

/** One attachment file (docs/api.md, "Attachments"): a scanned invoice or a contract, with room to spare. */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
/** A record's files: invoices carry a scan or two and their backing documents, not an archive. */
export const MAX_ATTACHMENTS_PER_RECORD = 20;
/** An account's attachments together, unless `ferry serve --attachment-quota` says otherwise. */
export const DEFAULT_ATTACHMENT_QUOTA_BYTES = 1024 ** 3;
/** An attachment's file name, in characters: what file systems allow. */
export const MAX_ATTACHMENT_NAME = 255;

/** What is wrong with an attachment's file name, or undefined when it is fine. */
export function attachmentNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'is empty';
  if ([...name].length > MAX_ATTACHMENT_NAME) return `is longer than ${MAX_ATTACHMENT_NAME} characters`;
  if (name.includes('/') || name.includes('\\')) return 'contains a path separator (/ or \\); send the file name alone';
  // C1 controls too: the name goes into a Content-Disposition header on download.
  for (const char of name) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 'contains a control character (NUL, newline, tab…)';
  }
  if (name === '.' || name === '..') return 'is not a file name';
  return formatCharacterProblem(name);
}

/** The only tag keys a filter may name: the store splices this text into its queries, so nothing else gets in. */
export const FILTERABLE_TAG_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
