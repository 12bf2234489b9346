// Reading what the operator's tools read: a Prometheus exposition as samples, and log lines.
import { request } from 'undici';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `where`. */
export function total(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

export async function scrape(metricsUrl: string): Promise<{ contentType: string; samples: Sample[]; text: string }> {
  const answer = await request(metricsUrl);
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`GET ${metricsUrl}: ${answer.statusCode} ${text}`);
  return { contentType: String(answer.headers['content-type']), samples: parseExposition(text), text };
}

export async function getJson(url: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const answer = await request(url);
  const text = await answer.body.text();
  return { status: answer.statusCode, body: text ? JSON.parse(text) : undefined, headers: answer.headers };
}

/** Every non-empty line of a JSON log, parsed; a line that is not JSON fails the test. */
export function jsonLines(stderr: string): Array<Record<string, any>> {
  return stderr.split('\n').filter((line) => line.trim() !== '').map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>;
    } catch {
      throw new Error(`a log line that is not JSON: ${line}`);
    }
  });
}

/** Any UUID: the ids of companies, connections, keys, pulls and accounts all are. */
export const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
