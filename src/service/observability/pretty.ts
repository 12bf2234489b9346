// The log as a person reads it on a terminal: pino's JSON lines turned into one line each,
// `12:04:05.120 INFO  GET /companies 200 in 3.1 ms  route=/companies status=200 …`: the
// time of day, the level, the message, then the other fields as key=value.
import { Writable } from 'node:stream';

/** Fields every line has, shown in the line's head or not at all. */
const HEAD = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'name']);

export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = String(entry.level ?? '').toUpperCase().padEnd(5);
  const rest = Object.entries(entry).filter(([key, value]) => !HEAD.has(key) && value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  return `${time} ${level} ${String(entry.msg ?? '')}${rest.length > 0 ? `  ${rest.join(' ')}` : ''}`;
}

export function prettyStream(out: Writable): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      const lines = String(chunk).split('\n').filter((line) => line.length > 0);
      out.write(lines.map((line) => `${prettyLine(line)}\n`).join(''));
      done();
    },
  });
}
