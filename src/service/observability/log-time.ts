// The log line's time, as pino's isoTime writes it (`,"time":"2026-11-27T22:57:57.909Z"`),
// but with the date and time of day formatted once a second: a Date and its ISO string per
// line were pino's largest share of a cached page's cost.
let second = Number.NaN;
let head = '';

export function isoTimeBySecond(): string {
  const now = Date.now();
  const at = Math.floor(now / 1000);
  if (at !== second) {
    second = at;
    head = `,"time":"${new Date(at * 1000).toISOString().slice(0, 20)}`;
  }
  const ms = now - at * 1000;
  return `${head}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}
