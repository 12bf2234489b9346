// Paging on the sandbox platforms: page + pageSize (limits in platforms/paging.ts), or the
// opaque cursor a page returns in `next` (an offset, so it stays right if the caller changes pageSize).

export const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`).toString('base64url');

export function decodeCursor(cursor: string): number | undefined {
  const match = /^o:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}
