import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
// One module per kind: the packages' indexes load every model of a group, seconds of imports.
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object; the rules read it as plain data. */
export type KubeObject = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: any };

export const KUSTOMIZE_ROOT = resolve(import.meta.dirname, '../../../deploy/kubernetes');

/** `kubectl kustomize` of a directory under deploy/kubernetes, offline, as objects. */
export function render(dir: string): KubeObject[] {
  const text = execFileSync('kubectl', ['kustomize', join(KUSTOMIZE_ROOT, dir)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJSON() as KubeObject);
}

/** The model of each kind the deployment uses, by apiVersion and kind: an object of another kind is an error. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
};

/** Schema errors of each object against the Kubernetes and KEDA OpenAPI schemas (kubernetes-models). */
export function schemaErrors(objects: KubeObject[]): string[] {
  return objects.flatMap((o) => {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!Model) return [`${o.kind} ${o.metadata.name}: no schema for ${o.apiVersion} ${o.kind}`];
    try {
      new Model(o).validate();
      return [];
    } catch (error) {
      return [`${o.kind} ${o.metadata.name}: ${error instanceof Error ? error.message : String(error)}`];
    }
  });
}

/** The pod template of a workload, with the name to report it by. */
function podsOf(objects: KubeObject[]): Array<{ name: string; spec: any }> {
  return objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job').map((o) => ({ name: `${o.kind} ${o.metadata.name}`, spec: o.spec.template.spec }));
}

const containersOf = (spec: any): any[] => [...(spec.initContainers ?? []), ...(spec.containers ?? [])];

/** Names of things that are credentials: they come from a Secret, never a literal or a ConfigMap. */
const CREDENTIAL = /PASSWORD|TOKEN|SECRET|API_KEY|_KEY$|CREDENTIAL|AUTH/i;
/** A URL with a password in it (scheme://user:password@host or scheme://:password@host). */
const URL_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]+@/i;

/**
 * What the deployment promises beyond the schemas, as findings (empty: all hold):
 * - credentials only from Secrets: no ConfigMap entry or literal env value is named like one or
 *   holds a URL with a password;
 * - every container has resource requests and limits for cpu and memory;
 * - the Docker socket is never mounted, no container is privileged;
 * - the worker: readiness and liveness probes on its health file, a grace period of at least ten
 *   minutes, and exactly the capabilities its sandboxes need, everything else dropped.
 */
export function ruleFindings(objects: KubeObject[], workerCapabilities: readonly string[]): string[] {
  const found: string[] = [];
  for (const map of objects.filter((o) => o.kind === 'ConfigMap')) {
    for (const [key, value] of Object.entries<string>(map.data ?? {})) {
      if (CREDENTIAL.test(key)) found.push(`ConfigMap ${map.metadata.name}: ${key} looks like a credential; put it in a Secret`);
      if (URL_PASSWORD.test(value)) found.push(`ConfigMap ${map.metadata.name}: ${key} holds a URL with a password`);
    }
  }
  for (const pod of podsOf(objects)) {
    for (const volume of pod.spec.volumes ?? []) {
      if (String(volume.hostPath?.path ?? '').includes('docker.sock')) found.push(`${pod.name}: mounts the Docker socket`);
    }
    for (const c of containersOf(pod.spec)) {
      const where = `${pod.name} container ${c.name}`;
      for (const env of c.env ?? []) {
        if (env.value !== undefined && (CREDENTIAL.test(env.name) || URL_PASSWORD.test(env.value))) found.push(`${where}: ${env.name} is a literal credential`);
      }
      for (const kind of ['requests', 'limits'])
        for (const resource of ['cpu', 'memory']) if (!c.resources?.[kind]?.[resource]) found.push(`${where}: no ${resource} in resources.${kind}`);
      if (c.securityContext?.privileged) found.push(`${where}: privileged`);
      if (c.securityContext?.capabilities?.drop?.join() !== 'ALL') found.push(`${where}: does not drop every capability`);
    }
  }
  const worker = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'genesis-worker');
  if (!worker) return [...found, 'no Deployment genesis-worker'];
  const spec = worker.spec.template.spec;
  const c = spec.containers.find((x: any) => x.name === 'worker');
  if ((spec.terminationGracePeriodSeconds ?? 30) < 600) found.push('worker: a grace period under ten minutes cuts running episodes short');
  const healthFile = c.args.find((a: string) => a.startsWith('--health-file='))?.slice('--health-file='.length);
  if (!healthFile) found.push('worker: no --health-file for its probes');
  if (!c.args.includes('--refuse-unconfined')) found.push('worker: takes jobs even when it cannot confine them (no --refuse-unconfined)');
  for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
    const command = c[probe]?.exec?.command?.join(' ') ?? '';
    if (!healthFile || !command.includes(healthFile)) found.push(`worker: ${probe} does not read the health file`);
  }
  if (!/grep -qx ready/.test(c.readinessProbe?.exec?.command?.join(' ') ?? '')) found.push('worker: readiness does not require the state ready');
  const added = [...(c.securityContext?.capabilities?.add ?? [])].sort();
  if (added.join() !== [...workerCapabilities].sort().join())
    found.push(`worker: capabilities ${added.join(',')} are not ${[...workerCapabilities].sort().join(',')}`);
  return found;
}
