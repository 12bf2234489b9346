// The counters and histograms kept in plain numbers are scraped as prom-client's own: the
// same observations give the same exposition text, alone and added up with another
// thread's registry as a scrape does (thread-link.ts).
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ArrayCounter, ArrayHistogram } from '../../src/service/observability/array-metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.5, 1];
const LABELS = [
  { route: '/companies', method: 'GET', status: '200' },
  { route: '/companies/:companyId', method: 'GET', status: '404' },
  { route: 'unmatched', method: 'OTHER', status: '400' },
];
// Below, on and between the bounds, above the last one, and a value with a "\n" in its label's route.
const VALUES = [0.0004, 0.001, 0.0011, 0.0025, 0.7, 1, 3.25, 0.004];

function observed(registry: Registry, kind: 'prom-client' | 'arrays') {
  const labelNames = ['route', 'method', 'status'];
  const name = 'test_requests';
  if (kind === 'prom-client') {
    const counter = new Counter({ name: `${name}_total`, help: 'Requests "counted".', labelNames, registers: [registry] });
    const histogram = new Histogram({ name: `${name}_seconds`, help: 'Seconds\nof requests.', labelNames, buckets: BUCKETS, registers: [registry] });
    return (labels: Record<string, string>, value: number) => {
      counter.labels(labels).inc();
      histogram.labels(labels).observe(value);
    };
  }
  const counter = new ArrayCounter({ name: `${name}_total`, help: 'Requests "counted".', registry });
  const histogram = new ArrayHistogram({ name: `${name}_seconds`, help: 'Seconds\nof requests.', buckets: BUCKETS, registry });
  return (labels: Record<string, string>, value: number) => {
    counter.series(labels).inc();
    histogram.series(labels).observe(value);
  };
}

function fill(registry: Registry, kind: 'prom-client' | 'arrays', labelSets: Array<Record<string, string>>): Registry {
  const observe = observed(registry, kind);
  VALUES.forEach((value, i) => observe(labelSets[i % labelSets.length]!, value));
  return registry;
}

describe('metrics kept in plain numbers', () => {
  const labelSets = [...LABELS, { route: '/odd\n"route"\\', method: 'GET', status: '500' }];

  it('scrape as prom-client\'s Counter and Histogram do', async () => {
    const expected = await fill(new Registry(), 'prom-client', labelSets).metrics();
    const actual = await fill(new Registry(), 'arrays', labelSets).metrics();
    expect(actual).toContain('test_requests_seconds_bucket{le="+Inf",route="/companies",method="GET",status="200"} 2');
    expect(actual).toBe(expected);
  });

  it('add up with another registry\'s as prom-client\'s do', async () => {
    const other = async () => (await fill(new Registry(), 'prom-client', LABELS.slice(1))).getMetricsAsJSON();
    const expected = AggregatorRegistry.aggregate([await fill(new Registry(), 'prom-client', labelSets).getMetricsAsJSON(), await other()]).metrics();
    const actual = AggregatorRegistry.aggregate([await fill(new Registry(), 'arrays', labelSets).getMetricsAsJSON(), await other()]).metrics();
    expect(await actual).toBe(await expected);
  });

  it('keep one series per label set, and send none before it is made', async () => {
    const registry = new Registry();
    const counter = new ArrayCounter({ name: 'test_made_total', help: 'Made.', registry });
    expect(await registry.metrics()).toBe('# HELP test_made_total Made.\n# TYPE test_made_total counter\n');
    counter.series({ route: '/a' }).inc();
    counter.series({ route: '/a' }).inc();
    expect(await registry.metrics()).toContain('test_made_total{route="/a"} 2\n');
    const histogram = new ArrayHistogram({ name: 'test_made_seconds', help: 'Made.', buckets: [1], registry });
    histogram.series({ route: '/a' }).observe(Number.NaN);
    expect(await registry.metrics()).toContain('test_made_seconds_count{route="/a"} 0');
  });
});
