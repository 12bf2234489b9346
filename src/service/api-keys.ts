// API keys are random, shown once, and stored only as SHA-256 hashes: they carry 192 bits
// of entropy, so a slow password hash adds nothing.
import { createHash, randomBytes } from 'node:crypto';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

export function generateApiKey(): string {
  return `fy_${randomBytes(24).toString('base64url')}`;
}
