/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4),
 * for tests: it throws on anything a Prometheus server would refuse or that
 * the format's rules forbid (a malformed line, a TYPE after samples or twice,
 * a family's samples split, a series twice, a histogram without its +Inf
 * bucket or with buckets going down), and returns the families read.
 */
import { execFileSync } from 'node:child_process';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: string;
  help: string | undefined;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const FLOAT = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

function parseValue(text: string, line: number): number {
  if (/^[-+]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!FLOAT.test(text)) throw new Error(`line ${line}: value "${text}" is not a float`);
  return Number(text);
}

/** The family a sample name belongs to: a histogram's or summary's _bucket, _sum and _count belong to the base name. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const f = families.get(base);
      if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return base;
    }
  }
  return name;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without "="`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (Object.hasOwn(labels, name)) throw new Error(`line ${line}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label ${name} value not quoted`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
      const c = text[j]!;
      if (c === '"') break;
      if (c === '\\') {
        const n = text[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${n}`);
        j += 2;
      } else {
        value += c;
        j++;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`line ${line}: expected "," between labels`);
      i++;
    }
  }
  return labels;
}

const seriesKey = (s: Sample): string =>
  s.name + '{' + Object.keys(s.labels).sort().map((k) => `${k}=${JSON.stringify(s.labels[k])}`).join(',') + '}';

/** Reads the text; throws on the first fault. */
export function parsePromText(text: string): Map<string, Family> {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the text does not end with a line feed');
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const series = new Set<string>();
  let current: string | undefined;
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: undefined, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  const enter = (name: string, line: number): void => {
    if (current === name) return;
    if (finished.has(name)) throw new Error(`line ${line}: family ${name} appears again after another family`);
    if (current !== undefined) finished.add(current);
    current = name;
  };
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(raw);
      if (!m) return; // another comment
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name!)) throw new Error(`line ${line}: bad metric name "${name}"`);
      enter(name!, line);
      const f = family(name!);
      if (kind === 'TYPE') {
        if (f.samples.length > 0) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        if (f.type !== 'untyped' || !TYPES.has(rest ?? '')) throw new Error(`line ${line}: TYPE of ${name} twice or unknown: "${rest}"`);
        f.type = rest!;
      } else {
        if (f.help !== undefined) throw new Error(`line ${line}: HELP of ${name} twice`);
        f.help = rest ?? '';
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/.exec(raw);
    if (!m) throw new Error(`line ${line}: not a sample: ${raw}`);
    const [, name, labelText, valueText] = m;
    const sample: Sample = { name: name!, labels: parseLabels(labelText ?? '', line), value: parseValue(valueText!, line) };
    const base = familyOf(name!, families);
    enter(base, line);
    const f = family(base);
    if ('le' in sample.labels && !(f.type === 'histogram' && name === `${base}_bucket`)) throw new Error(`line ${line}: le outside a histogram bucket`);
    const key = seriesKey(sample);
    if (series.has(key)) throw new Error(`line ${line}: series ${key} twice`);
    series.add(key);
    f.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.keys(rest).sort().map((k) => [k, rest[k]]));
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      g.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name === `${f.name}_count`) g.count = s.value;
    else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else throw new Error(`${f.name}: unexpected sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${f.name} ${key}: buckets go down`);
    }
    const inf = sorted.at(-1);
    if (inf === undefined || inf[0] !== Infinity) throw new Error(`${f.name} ${key}: no +Inf bucket`);
    if (g.count === undefined || g.sum === undefined) throw new Error(`${f.name} ${key}: no _count or _sum`);
    if (inf[1] !== g.count) throw new Error(`${f.name} ${key}: +Inf bucket ${inf[1]} is not the count ${g.count}`);
  }
}

/** The value of the series with exactly these labels, or 0 when absent (a counter not yet seen). */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const base = familyOf(name, families);
  const f = families.get(base);
  const want = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
  const s = f?.samples.find((x) => x.name === name && JSON.stringify(Object.keys(x.labels).sort().map((k) => [k, x.labels[k]])) === want);
  return s?.value ?? 0;
}

/** Every label value of every sample. */
export function labelValues(families: Map<string, Family>): string[] {
  return [...families.values()].flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
}

/** Whether promtool (Prometheus's own checker) is on PATH. */
export function havePromtool(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v promtool'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs `promtool check metrics` over the text; throws with its report when it finds a fault. */
export function promtoolCheck(text: string): void {
  execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * The metrics INTERFACE.md section 13 names that a serving process exports
 * itself (the store's gauges, forecastd_runs and forecastd_latest_run_age_seconds,
 * come with a served /metrics only), and a sample of prom-client's defaults.
 */
export const PROCESS_METRICS: readonly string[] = [
  'forecastd_http_requests_total',
  'forecastd_http_request_duration_seconds',
  'forecastd_ingest_files_total',
  'forecastd_ingest_records_total',
  'forecastd_cache_requests_total',
  'forecastd_store_errors_total',
  'forecastd_rate_limited_total',
  'forecastd_sse_clients',
  'forecastd_webhook_deliveries_total',
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_seconds',
];
