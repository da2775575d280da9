import { describe, expect, it } from 'vitest';
import { formatPrometheusText } from '../../../src/telemetry/prometheus-text.js';

describe('the Prometheus text format', () => {
  it('writes HELP and TYPE lines, escaped label values, and special numbers as Prometheus spells them', () => {
    const text = formatPrometheusText([
      { name: 'x_total', help: 'a\\b\nc', type: 'counter', samples: [{ labels: { reason: 'say "hi"\\\n' }, value: 3 }, { value: Number.POSITIVE_INFINITY }] },
    ]);
    expect(text).toBe('# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\nx_total{reason="say \\"hi\\"\\\\\\n"} 3\nx_total +Inf\n');
  });

  it('writes a histogram as cumulative buckets up to +Inf, with its sum and count', () => {
    const text = formatPrometheusText([
      { name: 'd_seconds', help: 'd', type: 'histogram', buckets: [10, 1], series: [{ labels: { w: 'a' }, values: [0.5, 1, 4, 20] }] },
    ]);
    expect(text.split('\n').slice(2, -1)).toEqual([
      'd_seconds_bucket{w="a",le="1"} 2',
      'd_seconds_bucket{w="a",le="10"} 3',
      'd_seconds_bucket{w="a",le="+Inf"} 4',
      'd_seconds_sum{w="a"} 25.5',
      'd_seconds_count{w="a"} 4',
    ]);
  });

  it('refuses a metric or label name Prometheus would reject, rather than serve a page it cannot parse', () => {
    expect(() => formatPrometheusText([{ name: 'bad-name', help: '', type: 'gauge', samples: [] }])).toThrow('not a Prometheus metric name');
    expect(() => formatPrometheusText([{ name: 'ok', help: '', type: 'gauge', samples: [{ labels: { 'a-b': 'x' }, value: 1 }] }])).toThrow(
      'not a Prometheus label name',
    );
  });
});
