import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';
import { loadRecording, startReplayServer, type ReplayServer } from '../agents/replay-server.js';

/** A span as OTLP/JSON carries it, with its attributes made a plain object. */
interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number };
  attributes: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

/** A local OTLP/HTTP collector: takes POST /v1/traces in the JSON encoding and keeps every span and resource. */
async function startCollector(): Promise<{
  url: string;
  spans: ReceivedSpan[];
  resources: Array<Record<string, unknown>>;
  paths: string[];
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const resources: Array<Record<string, unknown>> = [];
  const paths: string[] = [];
  const value = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? null));
  const flat = (list: Array<{ key: string; value: OtlpValue }> = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const parsed = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: any[] }; scopeSpans: Array<{ spans: any[] }> }> };
      for (const rs of parsed.resourceSpans) {
        resources.push(flat(rs.resource.attributes));
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, attributes: flat(s.attributes) });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, resources, paths, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let replay: ReplayServer | undefined;
let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
afterEach(async () => {
  await replay?.close();
  await collector?.close();
  replay = undefined;
  collector = undefined;
});

describe('episodes as OpenTelemetry traces', () => {
  itWith('bwrap')(
    'exports each episode of genesis run as a trace over OTLP/HTTP: the episode, its phases, the agent as a GenAI span with tokens and cost, gate steps, integration and landing',
    async () => {
      replay = await startReplayServer(await loadRecording('world-tasks'));
      collector = await startCollector();
      const manifest = baseManifest({ agent: { kind: 'openai', baseUrl: replay.baseUrl, model: 'gpt-4.1-mini', timeoutSec: 60 } });
      const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });

      const cli = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'genesis-test',
      });
      expect(await cli.exited, cli.stderr()).toBe(0);

      expect(collector.paths.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);
      expect(collector.resources[0]).toMatchObject({ 'service.name': 'genesis-test', 'genesis.world': 'fixture' });
      const records = await new GitLedger(f.world.path).readAll();
      expect(records).toHaveLength(2);
      for (const record of records) {
        const root = collector.spans.find((s) => s.name === `episode ${record.task}` && s.attributes['genesis.episode.id'] === record.id)!;
        expect(root, `no trace for ${record.id}`).toBeDefined();
        expect(root.parentSpanId ?? '').toBe('');
        expect(root.attributes).toMatchObject({
          'genesis.task': record.task,
          'genesis.attempt': 1,
          'genesis.outcome': 'accepted',
          'genesis.commit': record.commit!,
        });
        const inTrace = collector.spans.filter((s) => s.traceId === root.traceId);
        const children = inTrace.filter((s) => s.parentSpanId === root.spanId).map((s) => s.name);
        expect(children).toEqual(expect.arrayContaining(['workspace', 'invoke_agent openai:gpt-4.1-mini', 'collect', 'gate', 'integrate', 'land']));
        const agent = inTrace.find((s) => s.name === 'invoke_agent openai:gpt-4.1-mini')!;
        expect(agent.attributes).toMatchObject({
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4.1-mini',
          'gen_ai.agent.name': 'openai:gpt-4.1-mini',
          'gen_ai.usage.input_tokens': record.usage!.inputTokens!,
          'gen_ai.usage.output_tokens': record.usage!.outputTokens!,
          'gen_ai.usage.cache_read.input_tokens': record.usage!.cachedTokens!,
          'genesis.usage.cost_usd': record.usage!.costUsd!,
        });
        // Its duration is the agent phase the ledger recorded.
        expect(Number((BigInt(agent.endTimeUnixNano) - BigInt(agent.startTimeUnixNano)) / 1_000_000n)).toBe(record.phases.agent);
        const gate = inTrace.find((s) => s.name === 'gate')!;
        const steps = inTrace.filter((s) => s.parentSpanId === gate.spanId);
        expect(steps.map((s) => s.name)).toEqual(record.gate!.steps.map((s) => `gate ${s.name}`));
        expect(steps.every((s) => s.attributes['process.exit.code'] === 0)).toBe(true);
      }
    },
    180_000,
  );
});
