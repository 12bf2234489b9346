// The handover report's rendering: placeholders, escaping, the inline SVG chart, and the
// shipped templates filled completely from a plan.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { templatePlan, type CompanyOutcome } from '../../src/ops/managed/plan.js';
import {
  chartSvg, escapeHtml, escapeMarkdown, render, renderHtml, renderMarkdown, reportJson, REPORT_TEMPLATES, timelineHtml, verdictSentence,
} from '../../src/ops/managed/report.js';

function outcome(row: number, verdict: 'pass' | 'fail', migratedAt: string, name = `Company ${row}`): CompanyOutcome {
  return {
    row, key: `ext:t${row}`, externalId: `t${row}`, companyName: name, companyId: `c${row}`, pilot: row === 2, migration: 'migrated', migratedAt,
    verdict, reasons: verdict === 'fail' ? ['reauthorization required: the legacy application refreshed the token at 2026-12-01T10:00:00Z, after syncing was confirmed disabled'] : [],
    durations: { syncSeconds: row, checkSeconds: row + 0.5 }, records: 10,
  };
}

describe('report rendering', () => {
  it('fills {{name}} escaped and {{{name}}} raw, and refuses a placeholder without a value', () => {
    expect(render('<p>{{a}}</p>{{{b}}}', { a: '<i>&"\'', b: '<b>ok</b>' }, escapeHtml)).toBe('<p>&lt;i&gt;&amp;&quot;&#39;</p><b>ok</b>');
    expect(() => render('{{missing}}', {}, escapeHtml)).toThrow(/names \{\{missing\}\}/);
    expect(escapeMarkdown('a | b\nc <d>')).toBe('a \\| b c &lt;d&gt;');
  });

  it('draws the companies migrated over time as an inline SVG, each company a dot coloured by its check', () => {
    expect(chartSvg([])).toContain('No company migrated yet');
    const svg = chartSvg([
      outcome(2, 'pass', '2026-12-01T10:00:00Z', 'Pilot <Ltd>'),
      outcome(3, 'pass', '2026-12-01T10:05:00Z'),
      outcome(4, 'fail', '2026-12-01T10:10:00Z'),
    ]);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(3);
    expect(svg.match(/fill="#cf222e"/g)).toHaveLength(1);
    expect(svg).toContain('Pilot &lt;Ltd&gt;: 2026-12-01 10:00:00 UTC, passed');
    expect(svg).toContain('3 companies in 10 min');
    expect(svg).toMatch(/<path d="M48\.0,\d+\.\d( H[\d.]+ V[\d.]+){3}"/);
  });

  it('keeps the check cells\' green and red off the verdict box (the browser test reads it; this says why)', () => {
    const style = readFileSync(join(REPORT_TEMPLATES, 'report.html'), 'utf8').match(/<style>([\s\S]*?)<\/style>/)![1]!.replace(/\/\*[\s\S]*?\*\//g, '');
    const rules = [...style.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => ({ selectors: m[1]!.split(',').map((s) => s.trim()), body: m[2]! }));
    const colours = (selector: string) => rules.filter((r) => r.selectors.includes(selector) && /(^|;)\s*color\s*:/.test(r.body));
    for (const verdict of ['.verdict.pass', '.verdict.attention', '.verdict.incomplete']) expect(colours(verdict), verdict).toHaveLength(1);
    // A rule that colours .pass or .fail text is the verdict's own or a table cell's.
    const loose = rules.flatMap((r) => r.selectors.filter((s) => /\.(pass|fail)\b/.test(s) && !/^(td|\.verdict)\./.test(s) && /(^|;)\s*color\s*:/.test(r.body)));
    expect(loose).toEqual([]);
  });

  it('renders the shipped templates completely, self-contained and escaped', () => {
    const plan = templatePlan();
    plan.client = { id: 'client-1', name: 'Acme <script>alert(1)</script> & Co' };
    plan.platform = { key: 'qhyg', name: 'QuickBooks Online', migrationRoute: 'managed', appClientId: 'APP1' };
    plan.contacts = [{ name: 'Jo | Bloggs', email: 'jo@acme.example' }];
    plan.companies.count = 3;
    plan.companies.pilot = { row: 2, key: 'ext:t2', externalId: 't2', companyName: 'Company 2' };
    plan.outcomes = [outcome(2, 'pass', '2026-12-01T10:00:00Z'), outcome(3, 'fail', '2026-12-01T10:01:00Z', 'Pipe | Co')];
    // A failed step's hint is a command for the support person, with this machine's paths.
    Object.assign(plan.steps[5]!, { state: 'failed', notes: '1 of 3 companies failed', hint: 'Run step 6 again: ferry managed step 6 --confirm --file /plans/acme.json --api-key-file /home/sam/admin.key' });
    const data = reportJson(plan, '/plans/acme.json', new Date('2026-12-01T12:00:00Z'));
    expect(JSON.stringify(data)).not.toMatch(/\/plans\/|\/home\//);
    expect(data.steps[5]).not.toHaveProperty('hint');
    expect(data.verdict).toBe('fail');
    expect(data.summary).toMatchObject({ companies: 3, checked: 2, passed: 1, failed: 1, medianSyncSeconds: 2.5, slowestSyncSeconds: 3, records: 20 });

    const html = renderHtml(data, readFileSync(join(REPORT_TEMPLATES, 'report.html'), 'utf8'));
    expect(html).not.toMatch(/\{\{/);
    expect(html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    expect(html).not.toMatch(/<script|<link|\bsrc=|@import|url\(/i);
    expect(html).toContain('<style>');
    expect(html).toContain('<div class="verdict attention">1 of 3 migrated and checked; 1 migrated but not yet passing the end-to-end check (see below); 1 not checked yet</div>');
    // Nothing of this machine: the plan by its name alone; times in one stated zone.
    expect(data.plan).toBe('acme.json');
    expect(html).not.toContain('/plans/');
    expect(html).toContain('Generated 2026-12-01 12:00:00 UTC by ferry from the plan <code>acme.json</code>. Times are in UTC.');
    // The pilot under its company id, as in every other place of the report.
    expect(html).toContain('<tr><th>Pilot</th><td>Company 2 (c2): passed</td></tr>');
    expect(html).toContain('<li><strong>Pipe | Co</strong> (row 3, <code>c3</code>): reauthorization required');

    const md = renderMarkdown(data, readFileSync(join(REPORT_TEMPLATES, 'report.md'), 'utf8'));
    expect(md).not.toMatch(/\{\{/);
    expect(md).toContain('| Contacts | Jo \\| Bloggs &lt;jo@acme.example&gt; |');
    expect(md).toContain('| 3 | Pipe \\| Co | `c3` | 2026-12-01 10:01:00 UTC | ✗ FAIL | 3 | 3.5 | 10 |');
    expect(md).toContain('| 2 | Company 2 (pilot) |');
    expect(md).toContain('**1 of 3 migrated and checked; 1 migrated but not yet passing the end-to-end check (see below); 1 not checked yet.**');
  });

  it('words the verdict honestly: held back companies and why, without alarm', () => {
    const plan = templatePlan();
    plan.companies.count = 20;
    plan.outcomes = Array.from({ length: 20 }, (_, i) => outcome(i + 2, i === 19 ? 'fail' : 'pass', '2026-12-01T10:00:00Z'));
    Object.assign(plan.outcomes[19]!, { migration: 'not-imported', migratedAt: undefined });
    const data = reportJson(plan, '/tmp/x/plan.json');
    expect(verdictSentence(data)).toBe('19 of 20 migrated and checked; 1 held back because its old application refreshed its token after step 4 (see below)');
  });

  it('shows a timeline only when the run took long enough for one to say something', () => {
    const seconds = [outcome(2, 'pass', '2026-12-01T10:00:00Z'), outcome(3, 'pass', '2026-12-01T10:00:02Z')];
    const short = timelineHtml(seconds);
    expect(short).not.toContain('<svg');
    expect(short).toBe('<p>All 2 companies were migrated within 2 s (2026-12-01 10:00:00 UTC to 2026-12-01 10:00:02 UTC), too quickly for a timeline to say more.</p>');
    const days = timelineHtml([outcome(2, 'pass', '2026-12-01T10:00:00Z'), outcome(3, 'fail', '2026-12-03T10:00:00Z')]);
    expect(days).toContain('<svg');
    expect(days).toContain('2 companies migrated over 2.0 days (2026-12-01 10:00:00 UTC to 2026-12-03 10:00:00 UTC)');
    expect(timelineHtml([])).toBe('<p>No company has been migrated yet.</p>');
  });
});
