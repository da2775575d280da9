import { GenesisError } from '../errors/genesis-error.js';

/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: families of samples
 * with their HELP and TYPE lines, label values escaped, histograms as cumulative buckets with
 * `+Inf`, `_sum` and `_count`. Pure: the caller decides what the samples are.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Record<string, string>;

export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: Array<{ labels?: Labels; value: number }> }
  | { name: string; help: string; type: 'histogram'; buckets: readonly number[]; series: Array<{ labels?: Labels; values: readonly number[] }> };

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Writes the families, in order, as one exposition. */
export function formatPrometheusText(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const family of families) {
    if (!NAME.test(family.name))
      throw new GenesisError('internal', `not a Prometheus metric name: ${family.name}`, { hint: 'metric names match [a-zA-Z_:][a-zA-Z0-9_:]*' });
    out.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${family.name} ${family.type}`);
    if (family.type === 'histogram') {
      for (const series of family.series) out.push(...histogramLines(family.name, family.buckets, series.labels ?? {}, series.values));
    } else {
      for (const sample of family.samples) out.push(`${family.name}${labelText(sample.labels ?? {})} ${numberText(sample.value)}`);
    }
  }
  return `${out.join('\n')}\n`;
}

function histogramLines(name: string, buckets: readonly number[], labels: Labels, values: readonly number[]): string[] {
  const sorted = [...buckets].sort((a, b) => a - b);
  const lines = sorted.map((le) => `${name}_bucket${labelText({ ...labels, le: numberText(le) })} ${values.filter((v) => v <= le).length}`);
  lines.push(`${name}_bucket${labelText({ ...labels, le: '+Inf' })} ${values.length}`);
  lines.push(`${name}_sum${labelText(labels)} ${numberText(values.reduce((sum, v) => sum + v, 0))}`);
  lines.push(`${name}_count${labelText(labels)} ${values.length}`);
  return lines;
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  for (const [key] of entries)
    if (!LABEL.test(key)) throw new GenesisError('internal', `not a Prometheus label name: ${key}`, { hint: 'label names match [a-zA-Z_][a-zA-Z0-9_]*' });
  return `{${entries.map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
