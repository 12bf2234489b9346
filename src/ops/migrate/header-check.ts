// The header row as a whole, before any row is read: a column ferry does not know would
// fail every row the same way, so it is one error naming the column (with the column it
// most likely meant), and a header that is one long column holding `;` or tabs is a file
// written with another delimiter. A first line with no known column at all is a row, and
// is not repeated (it may hold tokens). Only a target listing an integration ferry does not
// know leaves a column near none of ferry's to its rows.
import { editDistance } from '../../lib/edit-distance.js';
import { BASE_COLUMNS, normaliseHeader, type HeaderMap } from './columns.js';
import { CsvFormatError } from './errors.js';
import type { IntegrationInfo } from './types.js';

const OTHER_DELIMITERS: Array<{ char: string; flag: string; label: string }> = [
  { char: ';', flag: "--delimiter ';'", label: '";"' },
  { char: '\t', flag: '--delimiter tab', label: 'tab' },
  { char: '|', flag: "--delimiter '|'", label: '"|"' },
];

/** The known column nearest to `raw` (as headers are matched: any case, no spaces, dashes or underscores), if one is close. */
export function nearestColumn(raw: string, known: readonly string[]): string | undefined {
  const wanted = normaliseHeader(raw);
  if (wanted.length < 3) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = normaliseHeader(name);
    // A cut-off name (refresh_tok) is as near as a typo.
    const distance = candidate.startsWith(wanted) || wanted.startsWith(candidate) ? 1 : editDistance(wanted, candidate);
    if (distance <= Math.max(2, Math.floor(candidate.length / 4)) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function delimiterProblem(header: readonly string[], delimiter: string): CsvFormatError | undefined {
  if (header.length !== 1) return undefined;
  const other = OTHER_DELIMITERS.find((d) => d.char !== delimiter && header[0]!.includes(d.char));
  if (!other) return undefined;
  const columns = header[0]!.split(other.char).length;
  return new CsvFormatError(`The header is one column holding ${columns} names: the file looks ${other.label}-delimited.`, 1, `Give ${other.flag}.`);
}

/** One error for the whole header, or none. */
export function headerProblem(header: readonly string[], map: HeaderMap, integrations: readonly IntegrationInfo[], delimiter: string): CsvFormatError | undefined {
  const delimited = delimiterProblem(header, delimiter);
  if (delimited) return delimited;
  // No cell is a column ferry knows: the first line is a row, not a header, and its cells
  // may be tokens, which an error must never repeat.
  if (map.unknown.length === header.length) {
    return new CsvFormatError(`The first line is not a header: none of its ${header.length} cells is a column ferry knows, so it is not repeated here.`, 1,
      'Add a header line naming the columns: companyName (or companyId), platformKey and the integration\'s token fields (ferry templates show KEY prints one).');
  }
  if (map.duplicates.length > 0) return new CsvFormatError(`The header names a column twice: ${map.duplicates.join(', ')}.`, 1, 'Remove or rename one of the two.');
  const known = [...new Set([...BASE_COLUMNS, ...integrations.flatMap((i) => i.tokenFields.map((f) => f.name))])];
  const unknown = map.unknown.map((raw) => ({ raw, near: nearestColumn(raw, known) }));
  // The target may list an integration whose token fields ferry does not know: a column
  // near none of ferry's may be one of them, and its rows say so (or take --token-fields).
  const refused = integrations.some((i) => i.known === false) ? unknown.filter((u) => u.near) : unknown;
  if (refused.length === 0) return undefined;
  const named = refused.map(({ raw, near }) => (near ? `${raw} (did you mean ${near}?)` : raw));
  const some = refused.length === 1 ? 'a column' : `${refused.length} columns`;
  return new CsvFormatError(`The header has ${some} ferry does not know: ${named.join(', ')}.`, 1,
    'Rename or remove it: the columns are companyName (or companyId), platformKey, externalId, connectionId, description, tags ' +
    'and the token fields of the integration (ferry templates show KEY lists them).');
}
