// The handover report, rendered from the plan: Markdown and a self-contained HTML page
// (inline CSS and an inline SVG chart; no external assets) from the templates in
// templates/managed/, and the same facts as JSON. Placeholders: {{name}} is escaped for
// the format (HTML entities; Markdown table pipes), {{{name}}} is inserted as built here
// (where every value was escaped on the way in).
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replaceFile } from '../../lib/atomic-file.js';
import { contactText, defaultReportDir, stepOf, type CompanyOutcome, type Plan } from './plan.js';
import { formatCount } from '../progress.js';

export const REPORT_TEMPLATES = fileURLToPath(new URL('../../../templates/managed/', import.meta.url));

export interface ReportFiles {
  dir: string;
  markdown: string;
  html: string;
  json: string;
}

export interface ReportJson {
  generatedAt: string;
  /** The plan file's name: the report goes to a client, so no path of this machine. */
  plan: string;
  verdict: 'pass' | 'fail' | 'incomplete';
  client: Plan['client'];
  platform: Plan['platform'];
  schedule: Plan['schedule'];
  contacts: Plan['contacts'];
  callbackUrl: string;
  syncingDisabledAt: string | null;
  pilot: Plan['companies']['pilot'];
  summary: {
    companies: number;
    checked: number;
    passed: number;
    failed: number;
    firstMigratedAt?: string;
    lastMigratedAt?: string;
    medianSyncSeconds?: number;
    slowestSyncSeconds?: number;
    records: number;
  };
  /** The steps without their hint and progress: commands and counts for the support team on their machine, not the client's. */
  steps: Array<Omit<Plan['steps'][number], 'hint' | 'progress'>>;
  companies: CompanyOutcome[];
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A Markdown table cell or inline text: no pipes, no line breaks, no HTML. */
export function escapeMarkdown(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/[\r\n]+/g, ' ');
}

/** Fills {{name}} (escaped) and {{{name}}} (raw); a placeholder without a value is an error. */
export function render(template: string, values: Record<string, string>, escape: (text: string) => string): string {
  return template.replace(/\{\{\{\s*(\w+)\s*\}\}\}|\{\{\s*(\w+)\s*\}\}/g, (_, raw: string | undefined, escaped: string | undefined) => {
    const name = (raw ?? escaped)!;
    const value = values[name];
    if (value === undefined) throw new Error(`The report template names {{${name}}}, which has no value.`);
    return raw ? value : escape(value);
  });
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function seconds(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(1)}s`;
}

/** A step's notes with the plan's folder left out (a plan written before notes stopped naming files): nothing of this machine reaches the client. */
function withoutLocalPaths(notes: string, planPath: string): string {
  return notes.split(`${dirname(resolve(planPath))}${sep}`).join('');
}

export function reportJson(plan: Plan, planPath: string, now: Date = new Date()): ReportJson {
  const outcomes = [...plan.outcomes].sort((a, b) => a.row - b.row);
  const passed = outcomes.filter((o) => o.verdict === 'pass').length;
  const failed = outcomes.length - passed;
  const migrated = outcomes.map((o) => o.migratedAt).filter((t): t is string => Boolean(t)).sort();
  const syncs = outcomes.map((o) => o.durations.syncSeconds).filter((s): s is number => s !== undefined);
  const total = plan.companies.count || outcomes.length;
  const verdict = failed > 0 ? 'fail' : passed < total ? 'incomplete' : 'pass';
  const summary: ReportJson['summary'] = { companies: total, checked: outcomes.length, passed, failed, records: outcomes.reduce((n, o) => n + (o.records ?? 0), 0) };
  if (migrated.length) {
    summary.firstMigratedAt = migrated[0]!;
    summary.lastMigratedAt = migrated[migrated.length - 1]!;
  }
  const mid = median(syncs);
  if (mid !== undefined) {
    summary.medianSyncSeconds = Math.round(mid * 10) / 10;
    summary.slowestSyncSeconds = Math.max(...syncs);
  }
  return {
    generatedAt: now.toISOString(), plan: basename(planPath), verdict,
    client: plan.client, platform: plan.platform, schedule: plan.schedule, contacts: plan.contacts,
    callbackUrl: plan.service.callbackUrl, syncingDisabledAt: stepOf(plan, 4).state === 'done' ? stepOf(plan, 4).at : null,
    pilot: plan.companies.pilot, summary, steps: plan.steps.map(({ hint: _hint, progress: _progress, ...st }) => ({ ...st, notes: withoutLocalPaths(st.notes, planPath) })), companies: outcomes,
  };
}

/** A time as the report shows it, in one stated zone: 2026-11-28 02:48:10 UTC. */
export function utc(iso: string | null | undefined): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return '–';
  return `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** A time in a table cell: its date and its clock each kept whole, so a narrow column breaks between them, never inside a date. */
function utcCell(iso: string | null | undefined): string {
  const text = utc(iso);
  const at = text.indexOf(' ');
  return at < 0 ? escapeHtml(text) : `<span class="when">${escapeHtml(text.slice(0, at))}</span> <span class="when">${escapeHtml(text.slice(at + 1))}</span>`;
}

/** Notes and reasons with their ISO times (…T03:01:11Z) as the rest of the report shows times. */
export function readableTimes(text: string): string {
  return text.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, (iso) => utc(iso));
}

/** 2 s, 14 min, 3.5 h, 2.1 days: how long the migration took, for a person. */
export function spanText(ms: number): string {
  const s = ms / 1000;
  if (s < 90) return `${Math.max(1, Math.round(s))} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} days`;
}

/** Below this a timeline is a vertical line: the report says the span in words instead. */
const CHART_MIN_SPAN_MS = 60_000;

/**
 * How the companies were migrated over time: a chart when the run took long enough for one
 * to show something (minutes to days), else one sentence; none before any company moved.
 */
export function timelineHtml(outcomes: CompanyOutcome[]): string {
  const times = outcomes.map((o) => Date.parse(o.migratedAt ?? '')).filter((t) => !Number.isNaN(t)).sort((a, b) => a - b);
  if (times.length === 0) return '<p>No company has been migrated yet.</p>';
  const span = times[times.length - 1]! - times[0]!;
  const n = times.length;
  const when = `${utc(new Date(times[0]!).toISOString())} to ${utc(new Date(times[n - 1]!).toISOString())}`;
  if (n < 2 || span < CHART_MIN_SPAN_MS) {
    return `<p>${n === 1 ? 'The company was' : `All ${n} companies were`} migrated within ${spanText(span)} (${escapeHtml(when)}), too quickly for a timeline to say more.</p>`;
  }
  return `<figure>\n${chartSvg(outcomes)}\n<figcaption>${n} companies migrated over ${spanText(span)} (${escapeHtml(when)}): cumulative count (connection created), each company a dot coloured by its check.</figcaption>\n</figure>`;
}

/** Cumulative companies migrated over time, each company a dot coloured by its check; inline SVG. */
export function chartSvg(outcomes: CompanyOutcome[]): string {
  const width = 720;
  const height = 240;
  const m = { left: 48, right: 16, top: 12, bottom: 36 };
  const points = outcomes.filter((o) => o.migratedAt && !Number.isNaN(Date.parse(o.migratedAt)))
    .map((o) => ({ t: Date.parse(o.migratedAt!), pass: o.verdict === 'pass', name: o.companyName }))
    .sort((a, b) => a.t - b.t);
  const frame = (inner: string) => `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Companies migrated over time" viewBox="0 0 ${width} ${height}" width="100%" style="max-width:${width}px">${inner}</svg>`;
  if (points.length === 0) return frame(`<text x="${width / 2}" y="${height / 2}" text-anchor="middle">No company migrated yet</text>`);
  const t0 = points[0]!.t;
  const t1 = points[points.length - 1]!.t;
  const span = Math.max(1, t1 - t0);
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const n = points.length;
  const x = (t: number, i: number) => m.left + (t1 === t0 ? (n === 1 ? plotW / 2 : (i / (n - 1)) * plotW) : ((t - t0) / span) * plotW);
  const y = (count: number) => m.top + plotH - (count / n) * plotH;
  const coords = points.map((p, i) => ({ x: x(p.t, i), y: y(i + 1), ...p }));
  let path = `M${m.left.toFixed(1)},${y(0).toFixed(1)}`;
  for (const c of coords) path += ` H${c.x.toFixed(1)} V${c.y.toFixed(1)}`;
  const time = (t: number) => utc(new Date(t).toISOString()).replace(/ UTC$/, '');
  const ticks = [0, Math.round(n / 2), n].filter((v, i, all) => all.indexOf(v) === i);
  const parts = [
    `<rect x="${m.left}" y="${m.top}" width="${plotW}" height="${plotH}" fill="#f6f8fa" stroke="#d0d7de"/>`,
    ...ticks.map((v) => `<line x1="${m.left}" x2="${m.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#d0d7de" stroke-dasharray="2,3"/><text x="${m.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`),
    `<path d="${path}" fill="none" stroke="#0969da" stroke-width="2"/>`,
    ...coords.map((c) => `<circle cx="${c.x.toFixed(1)}" cy="${c.y.toFixed(1)}" r="${n > 100 ? 2 : 3}" fill="${c.pass ? '#1a7f37' : '#cf222e'}"><title>${escapeHtml(`${c.name}: ${time(c.t)} UTC, ${c.pass ? 'passed' : 'FAILED'}`)}</title></circle>`),
    `<text x="${m.left}" y="${height - 12}">${escapeHtml(time(t0))} UTC</text>`,
    `<text x="${m.left + plotW}" y="${height - 12}" text-anchor="end">${escapeHtml(time(t1))} UTC</text>`,
    `<text x="${m.left + plotW / 2}" y="${height - 12}" text-anchor="middle">${n} compan${n === 1 ? 'y' : 'ies'} in ${spanText(span)}</text>`,
  ];
  return frame(parts.join(''));
}

function stateWord(state: string): string {
  return state === 'done' ? '✓ done' : state === 'failed' ? '✗ failed' : '· pending';
}

/**
 * The verdict in words, honest without being harsh: "19 of 20 migrated and checked; 1 held
 * back because its old application refreshed its token after step 4 (see below)".
 */
export function verdictSentence(data: ReportJson): string {
  const { companies: total, checked } = data.summary;
  const passed = data.companies.filter((o) => o.verdict === 'pass').length;
  const heldBack = data.companies.filter((o) => o.verdict === 'fail' && o.migration === 'not-imported');
  const failedCheck = data.companies.filter((o) => o.verdict === 'fail' && o.migration !== 'not-imported');
  const parts = [`${formatCount(passed)} of ${formatCount(total)} migrated and checked`];
  if (heldBack.length > 0) {
    const one = heldBack.length === 1;
    const legacy = heldBack.every((o) => o.reasons.some((r) => /legacy application refreshed/.test(r)));
    parts.push(legacy
      ? `${formatCount(heldBack.length)} held back because ${one ? 'its' : 'their'} old application refreshed ${one ? 'its token' : 'their tokens'} after step 4 (see below)`
      : `${formatCount(heldBack.length)} held back (see below)`);
  }
  if (failedCheck.length > 0) parts.push(`${formatCount(failedCheck.length)} migrated but not yet passing the end-to-end check (see below)`);
  if (checked < total) parts.push(`${formatCount(total - checked)} not checked yet`);
  return parts.join('; ');
}

function reportValues(data: ReportJson): Record<string, string> {
  const s = data.summary;
  const pilotOutcome = data.companies.find((o) => o.pilot);
  // The pilot under the one id the rest of the report uses: its company id (the tenant id is the platform's).
  const pilotId = pilotOutcome?.companyId;
  const pilot = data.pilot ? `${data.pilot.companyName ?? data.pilot.key}${pilotId ? ` (${pilotId})` : ''}` : '–';
  return {
    clientName: data.client.name || data.client.id,
    clientId: data.client.id,
    platformName: data.platform.name || data.platform.key,
    platformKey: data.platform.key,
    appClientId: data.platform.appClientId || '–',
    scheduleDate: data.schedule.date || '–',
    contacts: data.contacts.length ? data.contacts.map(contactText).join(', ') : '–',
    callbackUrl: data.callbackUrl || '–',
    syncingDisabledAt: utc(data.syncingDisabledAt),
    pilot: pilotOutcome ? `${pilot}: ${pilotOutcome.verdict === 'pass' ? 'passed' : 'FAILED'}` : pilot,
    firstMigrated: utc(s.firstMigratedAt),
    lastMigrated: utc(s.lastMigratedAt),
    medianSync: seconds(s.medianSyncSeconds),
    slowestSync: seconds(s.slowestSyncSeconds),
    records: formatCount(s.records),
    verdictSentence: verdictSentence(data),
    verdictClass: data.verdict === 'pass' ? 'pass' : data.verdict === 'fail' ? 'attention' : 'incomplete',
    generatedAt: utc(data.generatedAt),
    planFile: data.plan,
  };
}

export function renderMarkdown(data: ReportJson, template: string): string {
  const values = reportValues(data);
  const cell = (text: string | number | undefined) => escapeMarkdown(text === undefined ? '–' : String(text));
  values.stepRows = data.steps.map((st) => `| ${st.step}. ${cell(st.title)} | ${stateWord(st.state)} | ${cell(utc(st.at))} | ${cell(st.by ?? '–')} | ${cell(readableTimes(st.notes) || '–')} |`).join('\n');
  const failures = data.companies.filter((o) => o.verdict === 'fail');
  values.failureList = failures.length === 0
    ? 'None: every company checked passed.'
    : failures.map((o) => `- **${cell(o.companyName)}** (row ${o.row}${o.companyId ? `, \`${cell(o.companyId)}\`` : ''}): ${cell(readableTimes(o.reasons.join('; ')) || 'failed')}`).join('\n');
  values.companyRows = data.companies.map((o) => `| ${o.row} | ${cell(o.companyName)}${o.pilot ? ' (pilot)' : ''} | ${o.companyId ? `\`${cell(o.companyId)}\`` : '–'} | ${cell(utc(o.migratedAt))} | ${o.verdict === 'pass' ? '✓ pass' : '✗ FAIL'} | ${cell(o.durations.syncSeconds)} | ${cell(o.durations.checkSeconds)} | ${cell(o.records)} |`).join('\n') || '| – | – | – | – | – | – | – | – |';
  return render(template, values, escapeMarkdown);
}

export function renderHtml(data: ReportJson, template: string): string {
  const values = reportValues(data);
  const e = (text: string | number | undefined) => escapeHtml(text === undefined ? '–' : String(text));
  values.timeline = timelineHtml(data.companies);
  values.stepRows = data.steps.map((st) => `<tr><td>${st.step}. ${e(st.title)}</td><td class="${e(st.state)} nowrap">${e(stateWord(st.state))}</td><td>${utcCell(st.at)}</td><td>${e(st.by ?? '–')}</td><td>${e(readableTimes(st.notes) || '–')}</td></tr>`).join('\n');
  const failures = data.companies.filter((o) => o.verdict === 'fail');
  values.failureList = failures.length === 0
    ? '<p>None: every company checked passed.</p>'
    : `<ul>\n${failures.map((o) => `<li><strong>${e(o.companyName)}</strong> (row ${o.row}${o.companyId ? `, <code>${e(o.companyId)}</code>` : ''}): ${e(readableTimes(o.reasons.join('; ')) || 'failed')}</li>`).join('\n')}\n</ul>`;
  values.companyRows = data.companies.map((o) => `<tr><td class="num">${o.row}</td><td>${e(o.companyName)}${o.pilot ? ' <span class="muted">(pilot)</span>' : ''}</td><td><code>${e(o.companyId ?? '–')}</code></td><td>${utcCell(o.migratedAt)}</td><td class="${o.verdict === 'pass' ? 'pass' : 'fail'} nowrap">${o.verdict === 'pass' ? '✓ pass' : '✗ FAIL'}</td><td class="num">${e(o.durations.syncSeconds)}</td><td class="num">${e(o.durations.checkSeconds)}</td><td class="num">${e(o.records)}</td></tr>`).join('\n');
  return render(template, values, escapeHtml);
}

export function defaultReportPath(planPath: string, dir?: string): string {
  return resolve(dir ?? defaultReportDir(planPath));
}

/** Writes report.md, report.html and report.json into `dir` (default <plan>-report/ beside the plan). */
export async function writeReport(plan: Plan, planPath: string, dir?: string, now: Date = new Date()): Promise<ReportFiles> {
  const out = defaultReportPath(planPath, dir);
  mkdirSync(out, { recursive: true });
  const data = reportJson(plan, planPath, now);
  const files: ReportFiles = { dir: out, markdown: join(out, 'report.md'), html: join(out, 'report.html'), json: join(out, 'report.json') };
  replaceFile(files.markdown, renderMarkdown(data, readFileSync(join(REPORT_TEMPLATES, 'report.md'), 'utf8')));
  replaceFile(files.html, renderHtml(data, readFileSync(join(REPORT_TEMPLATES, 'report.html'), 'utf8')));
  replaceFile(files.json, `${JSON.stringify(data, null, 2)}\n`);
  return files;
}
