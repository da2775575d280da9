import { networkInterfaces } from 'node:os';

/** This host's IPv4 addresses, loopback first, and slirp4netns's gateway (which leads to the host): what a confined agent must not reach. */
export function hostAddresses(): string[] {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i !== undefined && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
  return ['127.0.0.1', ...own, '10.0.2.2'];
}
