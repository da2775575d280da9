import { OtlpEpisodeTracer } from '../telemetry/otlp-episode-tracer.js';

/**
 * The tracer of a run, from the environment as every OpenTelemetry SDK reads it: set
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and each finished episode is
 * exported as a trace over OTLP/HTTP; unset, none is made and nothing is sent anywhere.
 */
export function tracerFromEnv(world: string, env: NodeJS.ProcessEnv = process.env): OtlpEpisodeTracer | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  return new OtlpEpisodeTracer({ world });
}
