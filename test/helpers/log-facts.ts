/**
 * The `key=value` lines a probe script printed, as a map: what the sandbox tests' agents report
 * of what they could reach. A key may name the address it was tried on (`redis@127.0.0.1=…`).
 */
export function logFacts(log: string): Record<string, string> {
  return Object.fromEntries(
    log
      .split('\n')
      .filter((l) => /^[a-z-]+(@[0-9.]+)?=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}
