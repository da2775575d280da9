import { endpointOfUrl, hostAndPort, isLoopbackHost, type AgentEndpoint } from '../sandbox/egress/endpoints.js';
import type { AgentSandboxKind } from '../sandbox/agent-sandbox.js';
import type { ModelGateway } from '../channel/model-gateway.js';
import type { ChannelPrice } from '../channel/episode-channel.js';
import { priceOf } from './usage/prices.js';
import type { ModelPrice } from './usage/usage.js';

/** The port inside an agent's network namespace where its model gateway answers, when its baseUrl names no port of this host's loopback. */
export const IN_SANDBOX_MODEL_PORT = 7811;

/** Names of variables that hold a model credential: the gateway gives the agent a stand-in under each. */
const CREDENTIAL = /(?:^|_)(?:API_KEY|AUTH_TOKEN|OAUTH_TOKEN|BEARER_TOKEN)$/;

/**
 * How one agent reaches its model: through the gateway, to `upstream`, with stand-ins for the
 * `credentials` variables. The agent is given a URL on the gateway whose path is the upstream's
 * own (`/v1` for an OpenAI-compatible root), so the gateway forwards each path as it came.
 */
export interface ModelRoute {
  gateway: ModelGateway;
  upstream: URL;
  /** Each credential variable of the agent, and the variable of this host whose key it stands for (the same name, but for the built-in agent's OPENAI_API_KEY). */
  credentials: Readonly<Record<string, string>>;
  /** Where the agent meets the gateway inside its network namespace (bridged to the episode's listener), or null when it sees this host's loopback. */
  inside: { host: string; port: number } | null;
  /** The path of the URL the agent is given. */
  path: string;
  stallMs: number;
  maxTokens?: number;
  maxCostUsd?: number;
  priceOf(model: string | null): ChannelPrice | null;
}

export interface RouteInput {
  baseUrl?: string | undefined;
  /** The vendor's API root when no baseUrl is set (a preset's); none: the agent needs baseUrl for the gateway. */
  defaultUpstream?: string | undefined;
  /** Every variable the agent gets from this host: the credential-looking ones get stand-ins. */
  variables: readonly string[];
  apiKeyEnv?: string | undefined;
  /** The variable the agent reads its key from when that is not `apiKeyEnv` itself (the built-in agent's OPENAI_API_KEY). */
  keyVariable?: string;
  sandbox: AgentSandboxKind;
  /** `agent.network: { mode: host }`: no namespace, the agent sees this host's loopback. */
  hostNetwork: boolean;
}

/** What an agent's configuration says of its calls: when one stalls, what an episode may spend, and the price of each model. */
export function routeLimits(config: {
  stallSec: number;
  maxTokens?: number | undefined;
  maxCostUsd?: number | undefined;
  model?: string | undefined;
  price?: ModelPrice | undefined;
}): Pick<ModelRoute, 'stallMs' | 'maxTokens' | 'maxCostUsd' | 'priceOf'> {
  return {
    stallMs: config.stallSec * 1000,
    ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
    ...(config.maxCostUsd === undefined ? {} : { maxCostUsd: config.maxCostUsd }),
    priceOf: (model) => priceOf(model ?? config.model, config.price),
  };
}

/** The route for an agent, or null when Genesis cannot know where its model is (no baseUrl, no vendor default). */
export function modelRouteOf(
  input: RouteInput,
  gateway: ModelGateway,
  limits: Pick<ModelRoute, 'stallMs' | 'maxTokens' | 'maxCostUsd' | 'priceOf'>,
): ModelRoute | null {
  const root = input.baseUrl ?? input.defaultUpstream;
  if (root === undefined) return null;
  const upstream = new URL(root);
  const credentials: Record<string, string> = Object.fromEntries(input.variables.filter((name) => CREDENTIAL.test(name)).map((name) => [name, name]));
  if (input.apiKeyEnv) credentials[input.keyVariable ?? input.apiKeyEnv] = input.apiKeyEnv;
  const base = input.baseUrl ? new URL(input.baseUrl) : null;
  const host = base?.hostname.replace(/^\[(.*)\]$/, '$1');
  // A loopback baseUrl keeps its own address inside the namespace; anything else is met on a port of the namespace's own loopback.
  const loopback = base && host && isLoopbackHost(host) && base.protocol === 'http:' ? { host, port: Number(base.port || 80) } : null;
  // A docker agent meets the gateway at its network's gateway address, on the episode's own port (see AgentSandbox.modelHost).
  const namespaced = input.sandbox === 'bwrap' && !input.hostNetwork;
  return {
    gateway,
    upstream,
    credentials,
    inside: namespaced ? (loopback ?? { host: '127.0.0.1', port: IN_SANDBOX_MODEL_PORT }) : null,
    path: upstream.pathname.replace(/\/$/, ''),
    ...limits,
  };
}

/**
 * The endpoints the agent's sandbox must let it reach: through the gateway, exactly the address
 * where it meets it in its namespace (bridged to the episode's listener); without a route, the
 * model of its baseUrl itself.
 */
export function sandboxEndpoints(route: ModelRoute | null, direct: readonly AgentEndpoint[]): AgentEndpoint[] {
  if (!route) return [...direct];
  if (!route.inside) return [];
  const { host, port } = route.inside;
  return [endpointOfUrl(`http://${hostAndPort(host, port)}/`)!];
}

/**
 * The real keys of the route's credentials, by the agent's variable: only those this host has,
 * so a CLI that prefers one variable over another (a bearer token over an API key) sees the same
 * ones set through the gateway as it would without it.
 */
export function hostCredentials(route: Pick<ModelRoute, 'credentials'>): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const [name, host] of Object.entries(route.credentials)) {
    const value = process.env[host];
    if (value) keys[name] = value;
  }
  return keys;
}

/** The URL the agent is given for its model, on the episode's listener `port`. */
export function agentModelUrl(route: ModelRoute, port: number, listening = '127.0.0.1'): string {
  const { inside } = route;
  const address = inside ? hostAndPort(inside.host, inside.port) : hostAndPort(listening, port);
  return `http://${address}${route.path}`;
}

/**
 * What `genesis run` says at start about the road to each agent's model: through the gateway (to
 * which endpoint), or direct, with why and how to change that. Null when no agent calls a model
 * (script and sim agents).
 */
export function describeModelRoad<Config extends { kind: string; baseUrl?: string | undefined; preset?: string | undefined }>(
  configs: readonly Config[],
  defaultOf: (config: Config) => string | null,
): string | null {
  const lines = new Set<string>();
  for (const config of configs) {
    if (config.kind !== 'command' && config.kind !== 'openai') continue;
    const upstream = config.baseUrl ?? (config.kind === 'command' ? defaultOf(config) : null);
    lines.add(
      upstream
        ? `through the Genesis gateway to ${upstream} (the agent holds stand-in keys; usage is measured on the wire)`
        : `direct, for ${config.preset ?? 'agent.command'}: Genesis cannot know its endpoint, so its key is in its sandbox and its usage is what it prints; set agent.baseUrl to route it through the gateway`,
    );
  }
  return lines.size > 0 ? `model: ${[...lines].join('; ')}` : null;
}
