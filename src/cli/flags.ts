// Parsers for flag values, so that a bad value is refused before anything runs, with a
// message that names the flag and what it takes.
import { InvalidArgumentError } from 'commander';
import { parseByteSize } from '../lib/byte-size.js';
import { parseDuration } from '../lib/duration.js';
import { parseHostPort } from '../lib/host-port.js';

/** A whole number: at least `min` (when given), up to `max` (when given). */
export function wholeNumber(flag: string, min?: number, max?: number) {
  const takes = max !== undefined ? `a whole number from ${min ?? 0} to ${max}` : min !== undefined ? `a whole number of at least ${min}` : 'a whole number';
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || (min !== undefined && n < min) || (max !== undefined && n > max)) throw new InvalidArgumentError(`${flag} must be ${takes}.`);
    return n;
  };
}

/** A repeatable HOST[:PORT] flag: each value checked, all of them kept in order. */
export function hostPortList(flag: string) {
  return (value: string, previous: string[] = []): string[] => {
    const parsed = parseHostPort(value);
    if (typeof parsed === 'string') throw new InvalidArgumentError(`${flag} ${parsed}.`);
    return [...previous, value];
  };
}

/** A duration of at least 1 ms (90s, 10m, 1h; a bare number is seconds), in milliseconds. */
export function durationArg(flag: string) {
  return (value: string): number => {
    const ms = parseDuration(value);
    if (ms === undefined || ms < 1) throw new InvalidArgumentError(`${flag} must be a duration such as 90s, 10m or 1h.`);
    return ms;
  };
}

/** A size in bytes (500MiB, 2GiB, 1.5G; a bare number is bytes). */
export function byteSize(flag: string) {
  return (value: string): number => {
    const bytes = parseByteSize(value);
    if (bytes === undefined) throw new InvalidArgumentError(`${flag} must be a size such as 500MiB or 2GiB.`);
    return bytes;
  };
}

/** A number above 0 (decimals allowed), e.g. --max-rate 2.5. */
export function positiveNumber(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0)) throw new InvalidArgumentError(`${flag} must be a number above 0, e.g. ${flag} 50.`);
    return n;
  };
}

/** --concurrency and --max-rate as given (absent ones left out), for an engine's options. */
export function limitFlags(flags: { concurrency?: number; maxRate?: number }): { concurrency?: number; maxRate?: number } {
  return { ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}), ...(flags.maxRate !== undefined ? { maxRate: flags.maxRate } : {}) };
}
