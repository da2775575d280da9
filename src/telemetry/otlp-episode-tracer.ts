import { ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { EpisodeTracer } from '../schedule/run/ports/ports.js';
import { planEpisodeSpans, type PlannedSpan } from './episode-spans.js';

/** Settings of {@link OtlpEpisodeTracer}. */
export interface OtlpTracerOptions {
  /** The collector's traces endpoint. @default from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, as every OTLP exporter reads them */
  url?: string;
  /** `service.name` of the traces. @default OTEL_SERVICE_NAME, else `genesis` */
  serviceName?: string;
  serviceVersion?: string;
  /** The world the traces are about (`genesis.world` on the resource). */
  world?: string;
}

/**
 * Exports each finished episode as one OpenTelemetry trace over OTLP/HTTP (the SDK's exporter,
 * batched): the spans {@link planEpisodeSpans} plans from its final record. Exporting never
 * throws into the run and never waits in it; a collector that is down loses traces, not episodes.
 */
export class OtlpEpisodeTracer implements EpisodeTracer {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(options: OtlpTracerOptions = {}) {
    const exporter = new OTLPTraceExporter(options.url ? { url: options.url } : {});
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: options.serviceName ?? (process.env.OTEL_SERVICE_NAME || 'genesis'),
        ...(options.serviceVersion ? { [ATTR_SERVICE_VERSION]: options.serviceVersion } : {}),
        ...(options.world ? { 'genesis.world': options.world } : {}),
      }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    this.tracer = this.provider.getTracer('genesis');
  }

  episodeEnded(record: EpisodeRecord): void {
    try {
      this.emit(planEpisodeSpans(record), ROOT_CONTEXT);
    } catch {
      // A record the planner cannot read costs its trace, never the run.
    }
  }

  /** Sends what is buffered, then stops. */
  async close(): Promise<void> {
    await this.provider.forceFlush().catch(() => undefined);
    await this.provider.shutdown().catch(() => undefined);
  }

  private emit(planned: PlannedSpan, parent: Context): void {
    const span = this.tracer.startSpan(planned.name, { startTime: planned.startMs, attributes: planned.attributes }, parent);
    if (planned.error !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: planned.error });
    const inside = trace.setSpan(parent, span);
    for (const child of planned.children) this.emit(child, inside);
    span.end(planned.endMs);
  }
}
