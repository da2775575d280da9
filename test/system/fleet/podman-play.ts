import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A Kubernetes object as kustomize renders it: only what this file reads and changes is typed. */
export type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };

export interface PodmanPlayOptions {
  /** A directory of this test: each PersistentVolumeClaim becomes a directory under it. */
  home: string;
  redisPort: number;
  servePort: number;
  /** Extra ConfigMap entries (the world's source, stall timings). */
  config: Record<string, string>;
  /** How many worker pods: podman plays one pod per Deployment whatever its replicas say. */
  workers: number;
}

/**
 * What `podman kube play` (Debian's podman 4.3) cannot take as a cluster does, changed as little as
 * possible, each for a reason a cluster does not have:
 * - a PersistentVolumeClaim is a directory of this test (podman's named volumes would outlive a failed run);
 * - a Job is played as its pod (podman 4.3 plays no Job), restartPolicy Never as the Job says;
 * - Services are left out: pods share the host's network (overlays/podman), so Redis and the
 *   dashboard get free ports of this machine instead of the Service's;
 * - the worker Deployment is played once per worker, since podman makes one pod of a Deployment;
 * - containers list no ports (podman maps none on the host's network) and probes name the port by number.
 * Everything else (images, commands, probes, capabilities, Secrets, ConfigMaps) is played as rendered.
 */
export async function forPodman(objects: KubeObject[], opts: PodmanPlayOptions): Promise<KubeObject[]> {
  const claims = objects.filter((o) => o.kind === 'PersistentVolumeClaim').map((o) => o.metadata.name);
  for (const claim of claims) await mkdir(join(opts.home, 'volumes', claim), { recursive: true });
  const played: KubeObject[] = [];
  for (const object of objects) {
    switch (object.kind) {
      case 'PersistentVolumeClaim':
      case 'Service':
        break;
      case 'ConfigMap':
        played.push({
          ...object,
          data: { ...object.data, GENESIS_REDIS: `redis://127.0.0.1:${opts.redisPort}`, ...opts.config },
        });
        break;
      case 'Job':
        played.push({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: object.metadata.name, labels: object.spec.template.metadata?.labels },
          spec: podSpec(object.spec.template.spec, opts),
        });
        break;
      case 'Deployment': {
        const copies = object.metadata.name === 'genesis-worker' ? opts.workers : 1;
        for (let i = 1; i <= copies; i++) {
          const name = copies === 1 ? object.metadata.name : `${object.metadata.name}-${i}`;
          played.push({
            ...object,
            metadata: { ...object.metadata, name },
            spec: { ...object.spec, template: { ...object.spec.template, spec: podSpec(object.spec.template.spec, opts) } },
          });
        }
        break;
      }
      default:
        played.push(object);
    }
  }
  return played;
}

function podSpec(spec: any, opts: PodmanPlayOptions): any {
  const volumes = (spec.volumes ?? []).map((v: any) =>
    v.persistentVolumeClaim ? { name: v.name, hostPath: { path: join(opts.home, 'volumes', v.persistentVolumeClaim.claimName), type: 'Directory' } } : v,
  );
  const containers = spec.containers.map((c: any) => {
    if (c.name === 'redis') {
      const probed = JSON.parse(JSON.stringify(c).replaceAll('redis-cli ping', `redis-cli -p ${opts.redisPort} ping`));
      return { ...probed, command: [...c.command.slice(0, -1), `${c.command.at(-1)} --port ${opts.redisPort}`] };
    }
    if (c.name === 'serve') {
      const probed = JSON.parse(JSON.stringify(c).replaceAll('"port":"http"', `"port":${opts.servePort}`));
      return { ...probed, args: c.args.map((a: string) => (a === '4600' ? String(opts.servePort) : a)) };
    }
    return c;
  });
  // On the host's network a container's ports are the host's: podman refuses to map them.
  for (const c of containers) delete c.ports;
  return { ...spec, volumes, containers };
}
