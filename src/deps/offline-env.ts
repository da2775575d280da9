/**
 * What package managers read to stay offline, set in every gate step: they then fail at once
 * with a clear error instead of retrying DNS for a minute (npm alone waits ~70 s).
 */
export const GATE_OFFLINE_ENV: Readonly<Record<string, string>> = {
  // npm, npx, pnpm (reads npm_config_*), yarn 1
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  YARN_ENABLE_OFFLINE_MODE: '1',
  // pip, uv, poetry's pip
  PIP_NO_INDEX: '1',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  UV_OFFLINE: '1',
  // cargo, go
  CARGO_NET_OFFLINE: 'true',
  GOPROXY: 'off',
};

const NETWORK_ERRORS: ReadonlyArray<[RegExp, string]> = [
  [/\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo/, 'a name lookup failed'],
  [/Could not resolve host|Temporary failure in name resolution|Name or service not known|nodename nor servname/i, 'a name lookup failed'],
  [/\bENOTCACHED\b|only-if-cached|--offline/, 'a package manager wanted to download'],
  [/\bENETUNREACH\b|Network is unreachable|\bECONNREFUSED\b.*registry/i, 'the network is unreachable'],
  [/Failed to establish a new connection|No matching distribution found|Could not find a version that satisfies|Because --no-index/i, 'pip wanted to download'],
  [/failed to download|Couldn't resolve host|attempting to make an HTTP request, but --offline/i, 'cargo wanted to download'],
];

/** What kind of network failure the output shows (a name lookup failed, …), or null. Pure. */
export function networkFailureKind(output: string): string | null {
  return NETWORK_ERRORS.find(([pattern]) => pattern.test(output))?.[1] ?? null;
}

/**
 * When a failed gate step's output shows it reached for the network, the sentence that says why
 * that fails and what to do; else null. Pure.
 */
export function describeNetworkFailure(output: string): string | null {
  const found = NETWORK_ERRORS.find(([pattern]) => pattern.test(output));
  if (!found) return null;
  return `${found[1]}: gates have no network. Install dependencies with verify.deps (files, install, paths) in world.yaml: they are installed once per lockfile with network and mounted into every gate (see docs/guides/dependencies.md)`;
}
