import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUILD = fileURLToPath(new URL('../../sandboxes/build-images.sh', import.meta.url));
const IMAGE = 'genesis/node:20';

/**
 * A Docker daemon of our own (own socket, data root, exec root and containerd), started with the
 * flags scripts/setup-services.sh gives the machine's daemon. Restarting the machine's daemon
 * would break every other user's containers; restarting this one breaks only ours. Processes
 * reach it through DOCKER_HOST.
 */
export class PrivateDocker {
  private process: ChildProcess | null = null;

  constructor(private readonly dir: string) {}

  get host(): string {
    return `unix://${join(this.dir, 'docker.sock')}`;
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const log = openSync(join(this.dir, 'dockerd.log'), 'a');
    const hostBridge = existsSync('/sys/class/net/docker0');
    // dockerd started with `--bridge none` deletes the interface docker0 of the network namespace it
    // runs in: in the machine's namespace that took the machine daemon's bridge away (every bridged
    // container then failed with "could not find bridge docker0"). A namespace of its own keeps it
    // off the machine's network; this daemon's containers need none.
    this.process = spawn(
      'unshare',
      [
        '--net',
        '--',
        'dockerd',
        '--host',
        this.host,
        '--data-root',
        join(this.dir, 'data'),
        '--exec-root',
        join(this.dir, 'exec'),
        '--pidfile',
        join(this.dir, 'docker.pid'),
        '--bridge',
        'none',
        '--iptables=false',
        '--ip-forward=false',
      ],
      { stdio: ['ignore', log, log] },
    );
    for (let i = 0; i < 300; i++) {
      if (await this.answers()) {
        if (hostBridge && !existsSync('/sys/class/net/docker0'))
          throw new Error("the private dockerd removed the machine's docker0 bridge; restart the machine daemon (bash scripts/setup-services.sh)");
        return;
      }
      await sleep(100);
    }
    throw new Error(`the private dockerd did not answer within 30 s; see ${join(this.dir, 'dockerd.log')}`);
  }

  /**
   * Puts the gate image into this daemon. The machine's daemon usually has it already (the image
   * builds FROM genesis/debian:bookworm, which a fresh daemon lacks and no registry serves): it is
   * copied over with save | load. Otherwise it is built here as on any machine, base image included.
   */
  async buildImage(): Promise<void> {
    const own = { ...process.env, DOCKER_HOST: this.host };
    const machine = { ...process.env };
    delete machine.DOCKER_HOST;
    const has = await run('docker', ['image', 'inspect', IMAGE], { env: machine }).then(
      () => true,
      () => false,
    );
    if (has) {
      await run('bash', ['-o', 'pipefail', '-c', `docker save ${IMAGE} | DOCKER_HOST='${this.host}' docker load --quiet`], {
        env: machine,
        maxBuffer: 1 << 20,
      });
      return;
    }
    await run('bash', [BUILD], { env: own });
  }

  /** Stops the daemon as a restart would (SIGTERM: its containers die with it) and starts it again. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const p = this.process;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGTERM');
    await gone;
    this.process = null;
  }

  private async answers(): Promise<boolean> {
    return run('docker', ['version', '--format', '{{.Server.Version}}'], { env: { ...process.env, DOCKER_HOST: this.host }, timeout: 5000 }).then(
      () => true,
      () => false,
    );
  }
}
