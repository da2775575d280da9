import { existsSync } from 'node:fs';

/** One install: a command run with network in a directory that holds only the dependency files. */
export interface InstallSpec {
  /** Host directory with the dependency files; the install writes its outputs here. */
  workDir: string;
  command: string;
  timeoutMs: number;
  memoryMb: number;
  /** Docker image (docker only). */
  image: string;
  maxOutputBytes?: number;
}

export interface InstallResult {
  exitCode: number;
  timedOut: boolean;
  output: string;
  durationMs: number;
}

/** Where the host's CA bundle is: the file the orchestrator's own variables name, else Debian's. */
export function hostCaBundle(): string | null {
  const named = [process.env.NODE_EXTRA_CA_CERTS, process.env.SSL_CERT_FILE, '/etc/ssl/certs/ca-certificates.crt'];
  return named.find((path): path is string => !!path && path.startsWith('/') && existsSync(path)) ?? null;
}

/**
 * The whole environment of an install, besides PATH and HOME: a locale and the CA variables of
 * npm, Node, Python, curl and cargo pointed at `bundle` (the registries are reached only with this
 * machine's certificates). Nothing else of the orchestrator's environment: no tokens, no keys.
 */
export function installEnv(bundle: string | null): Record<string, string> {
  const env: Record<string, string> = {
    LANG: 'C.UTF-8',
    CI: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
  };
  if (!bundle) return env;
  for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'PIP_CERT', 'CURL_CA_BUNDLE', 'CARGO_HTTP_CAINFO', 'npm_config_cafile'])
    env[name] = bundle;
  return env;
}
