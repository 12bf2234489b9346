// Counters and histograms for the paths every request takes, each series kept as plain
// numbers that prom-client reads only when scraped. prom-client's own inc() and observe()
// check and hash the labels on every call, and its histogram finds the bucket by a float
// made a string: a tenth of a cached page's cost. Each label set's series is made once and
// kept by its user. What a scrape gets is what prom-client's Counter and Histogram answer
// (the registry formats both alike: test/service/array-metrics.test.ts).
import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One sample as prom-client's get() answers it. */
interface Value {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
  exemplar?: null;
}

interface Options {
  name: string;
  help: string;
  registry: Registry;
}

/** A metric the registry reads as it reads its own: name, help, type and get(). */
abstract class ArrayMetric<S extends { labels: Labels }> {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  /** Series by their labels, in the order made (prom-client's order too). */
  private readonly made = new Map<string, S>();

  constructor(options: Options) {
    this.name = options.name;
    this.help = options.help;
    // The registry calls only get() (and reset()) of what it holds; prom-client's types list its own classes.
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these labels, made on the first call: keep it, a lookup costs what the series saves. */
  series(labels: Labels): S {
    const key = JSON.stringify(labels);
    let found = this.made.get(key);
    if (!found) {
      found = this.make(labels);
      this.made.set(key, found);
    }
    return found;
  }

  protected abstract make(labels: Labels): S;
  protected abstract values(series: S): Value[];

  get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }> {
    const values = [...this.made.values()].flatMap((s) => this.values(s));
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    this.made.clear();
  }
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}

  inc(): void {
    this.value++;
  }
}

export class ArrayCounter extends ArrayMetric<CounterSeries> {
  readonly type = 'counter';

  protected make(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected values(series: CounterSeries): Value[] {
    return [{ value: series.value, labels: series.labels }];
  }
}

export class HistogramSeries {
  /** Observations per bucket, not cumulative: the last one counts those above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly labels: Labels, private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
    this.counts.push(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class ArrayHistogram extends ArrayMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(options: Options & { buckets: readonly number[] }) {
    super(options);
    this.bounds = options.buckets;
  }

  protected make(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  /** As prom-client's Histogram answers get(): cumulative buckets with `le` first, then +Inf, the sum and the count. */
  protected values(series: HistogramSeries): Value[] {
    const bucket = `${this.name}_bucket`;
    let below = 0;
    const values: Value[] = this.bounds.map((le, i) => {
      below += series.counts[i]!;
      return { value: below, metricName: bucket, exemplar: null, labels: { le, ...series.labels } };
    });
    values.push(
      { value: series.count, metricName: bucket, exemplar: null, labels: { le: '+Inf', ...series.labels } },
      { value: series.sum, metricName: `${this.name}_sum`, labels: { ...series.labels } },
      { value: series.count, metricName: `${this.name}_count`, labels: { ...series.labels } },
    );
    return values;
  }
}
