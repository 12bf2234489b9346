// The handover report opened in a real browser: Debian's Chromium, headless, driven by
// playwright-core. The report comes from a real managed migration of 20 companies, each step
// run by the ferry binary against the real stack (one company held back by its legacy
// application, so one fails), and from that plan re-rendered by writeReport with long
// names, 1,000 companies, a run of two days and names that are markup. In the page: no
// console error, no request beyond the file itself, every company row visible, the chart
// drawn when the run was long enough for one (a sentence otherwise), nothing wider than the
// window at 1280 px and at 760 px (half a laptop screen), no date or clock broken over two
// lines, and every text readable against its background. Screenshots go to
// test-output/report-browser/.
//
// Chromium is installed by scripts/install-browser.mjs; where apt-get is unavailable the
// tests are skipped with the reason, except on CI, where they fail.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPlan, type CompanyOutcome, type Plan } from '../../src/ops/managed/plan.js';
import { escapeHtml, writeReport } from '../../src/ops/managed/report.js';
import type { Stack } from '../../src/stack.js';
import { runFerry } from '../helpers/cli.js';
import { onCi } from '../helpers/postgres-probe.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack } from '../helpers/stack.js';
import { sandboxCall } from '../helpers/sync.js';
import { keyFile, managedFixture } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTALL = join(ROOT, 'scripts', 'install-browser.mjs');
const SHOTS = join(ROOT, 'test-output', 'report-browser');
/** A desktop window, and half a laptop screen: the companies table fits both. */
const WIDTHS = [1280, 760] as const;
const COUNT = 20;
/** WCAG AA for body text: stricter than "differs", so near-invisible text fails too. */
const MIN_CONTRAST = 4.5;

interface Unreadable { tag: string; cls: string; text: string; color: string; background: string; ratio: number }
interface Facts {
  scrollWidth: number;
  tooWide: Array<{ tag: string; cls: string; right: number; text: string }>;
  /** Times whose date or clock (each a span.when) the layout broke over two lines. */
  splitTimes: string[];
  times: number;
  unreadable: Unreadable[];
  texts: number;
  verdict: { text: string; ratio: number };
  rows: number;
  visibleRows: number;
  names: string[];
  chart: { width: number; height: number; circles: number; drawn: number } | null;
  timeline: string;
  scripts: number;
  title: string;
}

// Runs in the page, as plain JS (no transpiled helpers can leak into it).
const inspect = (WIDTH: number) => String.raw`(() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return { r: 0, g: 0, b: 0, a: 0 };
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, below) => {
    const a = top.a + below.a * (1 - top.a);
    const mix = (k) => (top[k] * top.a + below[k] * below.a * (1 - top.a)) / (a || 1);
    return { r: mix('r'), g: mix('g'), b: mix('b'), a };
  };
  // The colour behind an element: its own and its ancestors' backgrounds over the white canvas.
  const backgroundOf = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg.a > 0) layers.push(bg);
      if (bg.a >= 1) break;
    }
    return layers.reverse().reduce((below, top) => over(top, below), { r: 255, g: 255, b: 255, a: 1 });
  };
  const luminance = ({ r, g, b }) => {
    const ch = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
  };
  const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const rgb = (c) => 'rgb(' + [c.r, c.g, c.b].map(Math.round).join(', ') + ')';
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  };
  const snippet = (el) => (el.textContent || '').trim().slice(0, 60);
  const readability = (el) => {
    const style = getComputedStyle(el);
    // SVG text is painted with fill; HTML text with color.
    const paint = el instanceof SVGElement ? parse(style.fill) : parse(style.color);
    const background = backgroundOf(el);
    const ink = over(paint, background);
    return { color: rgb(ink), background: rgb(background), ratio: contrast(ink, background) };
  };

  const texts = [...document.body.querySelectorAll('*')].filter((el) =>
    !el.closest('title, style, script') && [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) && shown(el));
  const unreadable = [];
  for (const el of texts) {
    const r = readability(el);
    if (r.ratio < ${MIN_CONTRAST}) unreadable.push({ tag: el.tagName.toLowerCase(), cls: el.getAttribute('class') || '', text: snippet(el), ...r });
  }
  const verdictEl = document.querySelector('.verdict');

  const tooWide = [...document.body.querySelectorAll('*')].map((el) => ({ el, right: el.getBoundingClientRect().right }))
    .filter(({ right }) => right > ${WIDTH} + 0.5)
    .map(({ el, right }) => ({ tag: el.tagName.toLowerCase(), cls: el.getAttribute('class') || '', right: Math.round(right), text: snippet(el) }));

  const whens = [...document.querySelectorAll('.when')];
  const splitTimes = whens.filter((el) => el.getClientRects().length > 1).map(snippet);

  const tables = document.querySelectorAll('table');
  const rows = [...tables[tables.length - 1].querySelectorAll('tbody tr')];
  const svg = document.querySelector('figure svg');
  const box = svg && svg.getBoundingClientRect();
  const circles = svg ? [...svg.querySelectorAll('circle')] : [];
  const heading = [...document.querySelectorAll('h2')].find((h) => h.textContent === 'Companies migrated over time');
  return {
    scrollWidth: document.documentElement.scrollWidth,
    tooWide: tooWide.slice(0, 10),
    splitTimes: splitTimes.slice(0, 10),
    times: whens.length,
    unreadable: unreadable.slice(0, 10),
    texts: texts.length,
    verdict: { text: verdictEl.textContent, ratio: readability(verdictEl).ratio },
    rows: rows.length,
    visibleRows: rows.filter(shown).length,
    names: rows.map((r) => r.cells[1].textContent.replace(/ \(pilot\)$/, '')),
    chart: svg && { width: box.width, height: box.height, circles: circles.length, drawn: circles.filter((c) => { const b = c.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length },
    timeline: heading ? heading.nextElementSibling.textContent.trim() : '',
    scripts: document.scripts.length,
    title: document.title,
  };
})()`;

interface Opened { facts: Facts; errors: string[]; requests: string[]; dialogs: string[]; screenshot: string; marker: unknown }

describe('the handover report in headless Chromium', () => {
  const work = tempDir('ferry-report-browser-');
  let unavailable = '';
  let browser: Browser | undefined;
  let stack: Stack | undefined;
  let planPath = '';
  let migrated: Plan;

  /** Opens the report `width` px wide, collects what went wrong, inspects it, and saves a screenshot. */
  async function open(html: string, name: string, fullPage = true, width: number = WIDTHS[0]): Promise<Opened> {
    const page = await browser!.newPage({ viewport: { width, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => { dialogs.push(`${d.type()}: ${d.message()}`); void d.dismiss(); });
    try {
      await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
      const facts = await page.evaluate(inspect(width)) as Facts;
      const marker = await page.evaluate('window.ferryInjected');
      mkdirSync(SHOTS, { recursive: true });
      const screenshot = join(SHOTS, `${name}-${width}.png`);
      await page.screenshot({ path: screenshot, fullPage });
      process.stdout.write(`report-browser: screenshot of the ${name} report: ${screenshot}\n`);
      return { facts, errors, requests, dialogs, screenshot, marker };
    } finally {
      await page.close();
    }
  }

  /** What every report must satisfy in the browser, `width` px wide. */
  function expectSound(opened: Opened, html: string, plan: Plan, width: number = WIDTHS[0]): void {
    const names = namesOf(plan);
    // A company held back before its migration has no time to be drawn at.
    const times = plan.outcomes.map((o) => Date.parse(o.migratedAt ?? '')).filter((t) => !Number.isNaN(t));
    const dots = times.length;
    const { facts } = opened;
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([pathToFileURL(html).href]);
    expect(opened.dialogs).toEqual([]);
    expect(facts.scripts).toBe(0);
    expect(facts.rows).toBe(names.length);
    expect(facts.visibleRows).toBe(names.length);
    expect(facts.names).toEqual(names);
    // A timeline only when the run took a minute or more: a chart of seconds says nothing, and one sentence says it all.
    if (Math.max(...times) - Math.min(...times) >= 60_000) {
      expect(facts.chart).not.toBeNull();
      expect(facts.chart!.width).toBeGreaterThan(0);
      expect(facts.chart!.height).toBeGreaterThan(0);
      expect(facts.chart!.circles).toBe(dots);
      expect(facts.chart!.drawn).toBe(dots);
    } else {
      expect(facts.chart).toBeNull();
      expect(facts.timeline).toMatch(new RegExp(`^All ${dots} companies were migrated within \\d+ s \\(.+ UTC to .+ UTC\\)`));
    }
    expect(facts.scrollWidth).toBeLessThanOrEqual(width);
    expect(facts.tooWide).toEqual([]);
    // Every step and migrated company has its time in a table cell: date and clock each whole.
    expect(facts.times).toBe(2 * (plan.steps.filter((st) => st.at).length + dots));
    expect(facts.splitTimes).toEqual([]);
    expect(facts.texts).toBeGreaterThan(names.length);
    expect(facts.verdict.ratio, `the verdict "${facts.verdict.text}" against its box`).toBeGreaterThanOrEqual(MIN_CONTRAST);
    expect(facts.unreadable).toEqual([]);
  }

  /** The migrated plan, changed by `edit`, rendered by writeReport into a directory of its own. */
  async function rendered(name: string, edit: (plan: Plan) => void): Promise<{ html: string; plan: Plan }> {
    const plan = structuredClone(migrated);
    edit(plan);
    const files = await writeReport(plan, planPath, join(work, `${name}-report`), new Date('2026-12-01T12:00:00Z'));
    return { html: files.html, plan };
  }

  const namesOf = (plan: Plan) => [...plan.outcomes].sort((a, b) => a.row - b.row).map((o) => o.companyName);

  beforeAll(async () => {
    const install = spawnSync(process.execPath, [INSTALL], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
    if (install.status === 2 && !onCi) {
      unavailable = 'Chromium is not installed and apt-get cannot install it here (see scripts/install-browser.mjs above): the browser test of the handover report is skipped';
      process.stderr.write(`report-browser: ${unavailable}\n`);
      return;
    }
    if (install.status !== 0) {
      const why = install.status === 2 ? ' (on CI this test never skips: the machine must be able to install Chromium)' : '';
      throw new Error(`scripts/install-browser.mjs failed (exit ${install.status ?? install.signal})${why}; its messages are above.`);
    }
    browser = await chromium.launch({
      executablePath: install.stdout.trim(),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });

    // A real managed migration of 20 companies; one company's legacy application refreshes
    // its token after syncing was confirmed disabled, so it fails its check.
    stack = await startTestStack('threads', { dataDir: join(work, 'data'), rateLimit: 0 });
    const target = ['--base-url', stack.baseUrl, '--api-key-file', keyFile(work, stack.adminKey)];
    // Each command as the binary, as the support person runs it.
    const run = (args: string[]) => runFerry([...target, ...args], { timeoutMs: 180_000 });
    const fixture = await managedFixture(run, { baseUrl: stack.baseUrl, sandboxUrl: stack.sandboxUrl, work, name: 'Acme & Sons Accounting', count: COUNT, invoices: 3 });
    planPath = join(work, 'acme', 'plan.json');
    const init = await run(['managed', 'init', '--platform', 'qhyg', '--client', fixture.clientId, '--name', 'Acme & Sons Accounting', '--companies', fixture.companies, '--file', planPath]);
    if (init.code !== 0) throw new Error(`managed init: ${init.stderr}`);
    const step = (n: number, ...flags: string[]) => run(['managed', 'step', String(n), '--confirm', '--file', planPath, '--by', 'Sam Support', '--poll-ms', '50', ...flags]);
    for (const [n, flags] of [[1, ['--app-client-id', fixture.appClientId]], [2, ['--date', '2026-12-01', '--contact', 'Jo Bloggs <jo@acme.example>']], [3, []], [4, []]] as const) {
      const result = await step(n, ...flags);
      if (result.code !== 0) throw new Error(`step ${n}: ${result.stderr}`);
    }
    const tenants = readFileSync(fixture.companies, 'utf8').trim().split('\n').slice(1).map((line) => line.split(',')[1]!);
    const refreshed = await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenants[9]}/legacy-refresh`, {});
    if (refreshed.status !== 200) throw new Error(`legacy refresh: ${JSON.stringify(refreshed.body)}`);
    const five = await step(5);
    if (five.code !== 0) throw new Error(`step 5: ${five.stderr}`);
    const six = await step(6);
    if (six.code !== 3) throw new Error(`step 6 should end partly failed, for one company (exit ${six.code}): ${six.stderr}`);
    migrated = readPlan(planPath);
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a normal report (20 companies, one failed) reads well: the verdict box included', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    expect(migrated.outcomes).toHaveLength(COUNT);
    expect(migrated.outcomes.filter((o) => o.verdict === 'fail')).toHaveLength(1);
    const html = join(dirname(planPath), 'plan-report', 'report.html');
    for (const width of WIDTHS) {
      const opened = await open(html, 'normal', true, width);
      expect(opened.facts.verdict.text).toBe(`${COUNT - 1} of ${COUNT} migrated and checked; 1 held back because its old application refreshed its token after step 4 (see below)`);
      expect(opened.facts.title).toBe('Handover: Acme & Sons Accounting · QuickBooks Online managed migration');
      expectSound(opened, html, migrated, width);
    }
    // Fit to send: no path of this machine, times stated in UTC, "Confirmed by" a person.
    const text = readFileSync(html, 'utf8');
    expect(text).not.toContain(work);
    expect(text).toContain('Times are in UTC.');
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(migrated.steps.every((s) => s.by === 'Sam Support')).toBe(true);
    // The pilot under the one id the report uses for every company, never the platform's tenant id.
    const pilot = migrated.outcomes.find((o) => o.pilot)!;
    expect(text).toContain(`<tr><th>Pilot</th><td>${escapeHtml(pilot.companyName)} (${pilot.companyId}): passed</td></tr>`);
    for (const o of migrated.outcomes) expect(text).not.toContain(o.externalId!);

    // Without the held-back company every company passed: the green box of the PASS verdict.
    const passing = await rendered('passing', (plan) => {
      plan.outcomes = plan.outcomes.filter((o) => o.verdict === 'pass');
      plan.companies.count = plan.outcomes.length;
      Object.assign(plan.steps[5]!, { state: 'done', notes: `${plan.outcomes.length} of ${plan.outcomes.length} companies migrated and passed the end-to-end check` });
    });
    const green = await open(passing.html, 'passing');
    expect(green.facts.verdict.text).toBe(`${COUNT - 1} of ${COUNT - 1} migrated and checked`);
    expectSound(green, passing.html, passing.plan);
  });

  it('long names without spaces wrap inside the page', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const long = (seed: string) => seed.repeat(Math.ceil(200 / seed.length)).slice(0, 200);
    const { html, plan } = await rendered('long-names', (p) => {
      p.client.name = long('AcmeHoldingsInternational');
      p.contacts = [{ name: long('Josephine'), email: `${long('j')}@acme.example` }];
      p.outcomes.forEach((o, i) => {
        o.companyName = long(`Company${i}Limited`);
        o.reasons = o.reasons.map(() => long('reauthorization_required_'));
      });
    });
    expect(plan.outcomes[0]!.companyName).toHaveLength(200);
    for (const width of WIDTHS) expectSound(await open(html, 'long-names', true, width), html, plan, width);
  });

  it('1,000 companies: every row shown, every dot drawn, the page still 1280 px wide', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const { html, plan } = await rendered('thousand', (p) => {
      const start = Date.parse(p.outcomes[0]!.migratedAt!);
      p.companies.count = 1000;
      p.outcomes = Array.from({ length: 1000 }, (_, i): CompanyOutcome => {
        const like = migrated.outcomes[i % migrated.outcomes.length]!;
        return { ...like, row: i + 2, key: `ext:tenant-${i}`, externalId: `tenant-${i}`, companyName: `Company ${i + 1}`, pilot: i === 0, migratedAt: like.migratedAt && new Date(start + i * 1500).toISOString() };
      });
    });
    for (const width of WIDTHS) {
      const opened = await open(html, 'thousand', false, width);
      expect(opened.facts.verdict.text).toBe('950 of 1,000 migrated and checked; 50 held back because their old application refreshed their tokens after step 4 (see below)');
      expectSound(opened, html, plan, width);
    }
  });

  it('a run of two days: the chart spans them and says so, at both widths', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const { html, plan } = await rendered('two-days', (p) => {
      const start = Date.parse('2026-12-01T09:00:00Z');
      const moved = p.outcomes.filter((o) => o.migratedAt);
      // The pilot on the first morning, the rest over the next two days.
      moved.forEach((o, i) => (o.migratedAt = new Date(start + (i / (moved.length - 1)) * 2 * 86_400_000).toISOString()));
    });
    for (const width of WIDTHS) {
      const opened = await open(html, 'two-days', true, width);
      expectSound(opened, html, plan, width);
      expect(opened.facts.timeline).toContain(`${COUNT - 1} companies migrated over 2.0 days (2026-12-01 09:00:00 UTC to 2026-12-03 09:00:00 UTC)`);
    }
  });

  it('names that are markup render as text: no script runs, no dialog opens, nothing is fetched', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const marks = ['<script>alert(1)</script>', '<img src=x onerror="window.ferryInjected=1">', '"><svg onload=alert(2)>', "</td></tr></table><script>window.ferryInjected=2</script>"];
    const { html, plan } = await rendered('markup', (p) => {
      p.client.name = `Acme <script>alert(1)</script>`;
      p.contacts = [{ name: '<b onmouseover=alert(3)>Jo</b>', email: 'jo@acme.example' }];
      p.outcomes.forEach((o, i) => {
        o.companyName = `${marks[i % marks.length]} Ltd ${i}`;
        o.reasons = o.reasons.map((r) => `${r} <script>alert(4)</script>`);
      });
    });
    const opened = await open(html, 'markup');
    expect(opened.marker).toBeUndefined();
    expect(opened.facts.title).toBe('Handover: Acme <script>alert(1)</script> · QuickBooks Online managed migration');
    expectSound(opened, html, plan);
  });
});
