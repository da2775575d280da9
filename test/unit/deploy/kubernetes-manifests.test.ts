import { describe, expect, it } from 'vitest';
import { EPISODE_QUEUE, queuePrefix, VERIFICATION_QUEUE } from '../../../src/queue/bullmq/distributed-job.js';
import { type KubeObject, render, ruleFindings, schemaErrors } from './manifest-rules.js';

/**
 * deploy/kubernetes rendered offline by kustomize (`kubectl kustomize`), every object validated
 * against the Kubernetes and KEDA schemas (kubernetes-models, @kubernetes-models/keda), and what
 * the deployment promises checked on what it renders. Each promise has the cheating manifest
 * that would break it, and the check is shown to catch it.
 */
const OVERLAYS = ['base', 'overlays/cluster', 'overlays/external-redis', 'overlays/podman'];
/** The capabilities worker.yaml states and explains, one by one; the worker gets exactly these. */
const WORKER_CAPABILITIES = ['SYS_ADMIN', 'NET_ADMIN', 'SETUID', 'SETGID', 'CHOWN', 'DAC_OVERRIDE', 'KILL'];

const rendered = new Map(OVERLAYS.map((dir) => [dir, render(dir)]));
const cluster = rendered.get('overlays/cluster')!;
const named = (objects: KubeObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const worker = (objects: KubeObject[]) => named(objects, 'Deployment', 'genesis-worker').spec.template.spec.containers[0];

describe('deploy/kubernetes', () => {
  it.each(OVERLAYS)('%s renders objects that all pass the Kubernetes and KEDA schemas', (dir) => {
    const objects = rendered.get(dir)!;
    expect(objects.length).toBeGreaterThan(5);
    expect(schemaErrors(objects)).toEqual([]);
  });

  it.each(OVERLAYS)('%s keeps every promise of the deployment (credentials, resources, probes, capabilities)', (dir) => {
    expect(ruleFindings(rendered.get(dir)!, WORKER_CAPABILITIES)).toEqual([]);
  });

  it('the schemas catch a wrong type, a bad quantity and a bad KEDA field', () => {
    const bad = structuredClone(cluster);
    worker(bad).resources.limits.cpu = 'lots';
    named(bad, 'Job', 'genesis-scheduler').spec.backoffLimit = 'six';
    named(bad, 'ScaledObject', 'genesis-worker').spec.minReplicaCount = 'zero';
    named(bad, 'ScaledObject', 'genesis-worker').spec.triggers[0].type = undefined;
    const errors = schemaErrors(bad).join('\n');
    expect(errors).toMatch(/Deployment genesis-worker: .*limits\/cpu must match format "quantity"/);
    expect(errors).toMatch(/Job genesis-scheduler: .*backoffLimit must be integer/);
    expect(errors).toMatch(/ScaledObject genesis-worker: .*minReplicaCount must be integer/);
    expect(errors).toMatch(/ScaledObject genesis-worker: .*triggers\/0 must have required property type/);
    expect(schemaErrors([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }])).toEqual(['Pod p: no schema for v1 Pod']);
  });

  it('catches a credential in a ConfigMap or a literal, the Docker socket, a missing limit, a probe that means nothing', () => {
    const bad = structuredClone(cluster);
    named(bad, 'ConfigMap', 'genesis-config').data.GENESIS_REDIS = 'redis://:hunter2@genesis-redis:6379';
    named(bad, 'ConfigMap', 'genesis-config').data.ANTHROPIC_API_KEY = 'sk-ant-xyz';
    const c = worker(bad);
    c.env.push({ name: 'GENESIS_TOKEN', value: 'tok' });
    delete c.resources.limits.memory;
    c.readinessProbe = { exec: { command: ['true'] } };
    named(bad, 'Deployment', 'genesis-worker').spec.template.spec.volumes.push({ name: 'docker', hostPath: { path: '/var/run/docker.sock' } });
    expect(ruleFindings(bad, WORKER_CAPABILITIES)).toEqual([
      'ConfigMap genesis-config: GENESIS_REDIS holds a URL with a password',
      'ConfigMap genesis-config: ANTHROPIC_API_KEY looks like a credential; put it in a Secret',
      'Deployment genesis-worker: mounts the Docker socket',
      'Deployment genesis-worker container worker: GENESIS_TOKEN is a literal credential',
      'Deployment genesis-worker container worker: no memory in resources.limits',
      'worker: readinessProbe does not read the health file',
      'worker: readiness does not require the state ready',
    ]);
  });

  it('catches a worker with more capabilities, privileged, cut short at stop, or taking jobs unconfined', () => {
    const bad = structuredClone(cluster);
    const spec = named(bad, 'Deployment', 'genesis-worker').spec.template.spec;
    const c = spec.containers[0];
    c.securityContext.capabilities.add.push('SYS_PTRACE');
    c.securityContext.privileged = true;
    spec.terminationGracePeriodSeconds = 30;
    c.args = c.args.filter((a: string) => a !== '--refuse-unconfined');
    expect(ruleFindings(bad, WORKER_CAPABILITIES)).toEqual([
      'Deployment genesis-worker container worker: privileged',
      'worker: a grace period under ten minutes cuts running episodes short',
      'worker: takes jobs even when it cannot confine them (no --refuse-unconfined)',
      `worker: capabilities ${[...WORKER_CAPABILITIES, 'SYS_PTRACE'].sort().join(',')} are not ${[...WORKER_CAPABILITIES].sort().join(',')}`,
    ]);
  });

  it('scales workers to zero on the lists of the queues they take jobs from, a worker per --concurrency jobs', () => {
    const scaled = named(cluster, 'ScaledObject', 'genesis-worker');
    expect(scaled.spec.scaleTargetRef.name).toBe('genesis-worker');
    expect(scaled.spec.minReplicaCount).toBe(0);
    const lists = [EPISODE_QUEUE, VERIFICATION_QUEUE].flatMap((q) => ['wait', 'active'].map((l) => `${queuePrefix()}:${q}:${l}`));
    expect(scaled.spec.triggers.map((t: any) => t.metadata.listName).sort()).toEqual(lists.sort());
    const concurrency = worker(cluster)
      .args.find((a: string) => a.startsWith('--concurrency='))
      .split('=')[1];
    for (const t of scaled.spec.triggers) {
      expect(t).toMatchObject({
        type: 'redis',
        metadata: { address: 'genesis-redis:6379', listLength: concurrency },
        authenticationRef: { name: 'genesis-redis' },
      });
    }
    expect(named(cluster, 'TriggerAuthentication', 'genesis-redis').spec.secretTargetRef).toEqual([
      { parameter: 'password', name: 'genesis-secrets', key: 'redis-password' },
    ]);
  });

  it('external-redis leaves Redis out and points Genesis and KEDA at the same other one', () => {
    const objects = rendered.get('overlays/external-redis')!;
    expect(objects.filter((o) => o.metadata.name.startsWith('genesis-redis') && o.kind !== 'TriggerAuthentication')).toEqual([]);
    const url = new URL(named(objects, 'ConfigMap', 'genesis-config').data.GENESIS_REDIS);
    for (const t of named(objects, 'ScaledObject', 'genesis-worker').spec.triggers) expect(t.metadata.address).toBe(`${url.hostname}:${url.port}`);
  });
});
