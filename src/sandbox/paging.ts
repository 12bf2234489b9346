// Paging on the sandbox platforms: page + pageSize, or the opaque cursor a page returns
// in `next` (an offset, so it stays right if the caller changes pageSize).

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`).toString('base64url');

export function decodeCursor(cursor: string): number | undefined {
  const match = /^o:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}
