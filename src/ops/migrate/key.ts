// The row's stable key, stored on the company as the tag `ferryKey`, so a rerun from any
// machine finds the company it created instead of creating a duplicate. Tag values hold
// at most 100 characters; longer keys are replaced by their SHA-256.
import { createHash } from 'node:crypto';

import { MAX_TAG_VALUE } from '../../platforms/limits.js';

export function ferryKey(row: { externalId?: string; companyName?: string; companyId?: string; platformKey: string }): string {
  const raw = row.externalId ? `ext:${row.externalId}`
    : row.companyId ? `id:${row.companyId}:${row.platformKey}`
    : `name:${row.platformKey}:${(row.companyName ?? '').trim().toLowerCase().replace(/\s+/g, ' ')}`;
  return raw.length <= MAX_TAG_VALUE ? raw : `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/** A 53-bit hash of a key: duplicate detection over a million rows in a few MB. */
export function keyHash(key: string): number {
  const digest = createHash('sha256').update(key).digest();
  return digest.readUIntBE(0, 6) * 32 + (digest[6]! >> 3);
}
