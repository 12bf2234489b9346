// Sizes as people write and read them: "500MiB", "2GiB", "1.5G", "4096". Units are binary
// (a MiB is 1,048,576 bytes) whether or not the "i" is written, as disk quotas usually are.

const UNIT_BYTES: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** "500MiB", "2GiB", "1.5G", "64k", "4096" (bytes); case-insensitive. Returns whole bytes, or undefined. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|(b)?)$/i.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNIT_BYTES[(match[2] ?? match[3] ?? '').toLowerCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** 1073741824 → "1 GiB", 524288000 → "500 MiB", 1536 → "1.5 KiB", 100 → "100 bytes". */
export function byteSizeText(bytes: number): string {
  for (const [unit, size] of [['TiB', 1024 ** 4], ['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}
