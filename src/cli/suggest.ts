// "Did you mean …?" for keys a person types: integration keys (4 letters, easy to
// mistype) and platform names (people type "xero" when they mean gbol).
import { editDistance } from '../lib/edit-distance.js';

export interface Candidate {
  key: string;
  name?: string;
}

/**
 * Candidates close to `input`: a key within two edits, or a name that contains the input
 * (or whose first word is within two edits of it), best first, at most `limit`.
 */
export function closeMatches<T extends Candidate>(input: string, candidates: readonly T[], limit = 5): T[] {
  const wanted = input.trim().toLowerCase();
  if (!wanted) return [];
  const scored: Array<{ candidate: T; score: number }> = [];
  for (const candidate of candidates) {
    const key = candidate.key.toLowerCase();
    const name = (candidate.name ?? '').toLowerCase();
    let score = Infinity;
    const keyDistance = editDistance(wanted, key);
    if (keyDistance <= 2) score = keyDistance;
    if (name) {
      if (name === wanted) score = Math.min(score, 0);
      else if (wanted.length >= 3 && name.includes(wanted)) score = Math.min(score, 1);
      else {
        const words = name.split(/[^a-z0-9]+/).filter(Boolean);
        const nearest = Math.min(...words.map((w) => editDistance(wanted, w)));
        if (wanted.length >= 4 && nearest <= 2) score = Math.min(score, 1 + nearest);
      }
    }
    if (score !== Infinity) scored.push({ candidate, score });
  }
  return scored.sort((a, b) => a.score - b.score).slice(0, limit).map((s) => s.candidate);
}

/** "gbol (Xero), qhyg (QuickBooks Online)" */
export function describeCandidates(candidates: readonly Candidate[]): string {
  return candidates.map((c) => (c.name ? `${c.key} (${c.name})` : c.key)).join(', ');
}
