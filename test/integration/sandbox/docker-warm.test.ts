import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect } from 'vitest';
import { warmOnly } from './warm-only.js';
import { DockerSandbox, removeStale, WarmPool, WARM_OWNER_LABEL, WARM_POOL_LABEL } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { describeSandboxContract, limits, processesWith, specFor } from './sandbox-contract.js';

const image = 'genesis/node:20';
const it = itWith('docker');

const contractPool = new WarmPool({ perKey: 1 });
afterAll(() => contractPool.drain());
describeSandboxContract('docker', () => warmOnly(contractPool), 'warm pool');

/** Lines of the probe's output as a record: `name=value`. */
function parse(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('a warm docker pool keeps gates apart', () => {
  const pool = new WarmPool({ perKey: 1 });
  const sandbox = warmOnly(pool);
  afterAll(() => pool.drain());

  it('gives the next gate nothing the last one left: files, processes, mounts, environment', async () => {
    const marker = `genesis-warm-left-${randomUUID()}`;
    const leave = [
      'echo left > /work/left.txt; echo left > /tmp/left; mkdir -p /tmp/d && echo left > /tmp/d/f',
      'echo left > /dev/shm/left; for p in /root / /var/tmp /etc /usr; do { echo left > $p/left; } 2>/dev/null && echo WROTE-$p; done',
      // The FIFO the command came through: neither writable nor a way to talk to the next container.
      '{ echo left > /.genesis-command; } 2>/dev/null && echo WROTE-FIFO',
      // Background processes of every kind, each of which would write into the work dir later.
      `(setsid sh -c 'sleep 2; echo late > /work/late-setsid; sleep 60' ${marker} &)`,
      `nohup sh -c 'sleep 2; echo late > /work/late-nohup; sleep 60' ${marker} >/dev/null 2>&1 &`,
      `sh -c "sh -c 'sleep 2; echo late > /work/late-fork; sleep 60 ${marker}' &" &`,
      '{ mount -t tmpfs none /tmp/d; } 2>/dev/null && echo MOUNTED',
      'export LEFT=1; echo "export LEFT=1" > /tmp/.profile; echo "LEFT=1" >> /tmp/.bashrc',
      'echo done',
    ].join('\n');
    const firstSpec = await specFor(leave, { limits });
    const first = await sandbox.run(firstSpec);
    expect(first.exitCode, first.output).toBe(0);
    expect(first.output).toBe('done\n');
    // The gate's first process ended: the kernel took its whole PID namespace with it.
    for (let i = 0; i < 20 && processesWith(marker); i++) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(marker)).toBe('');

    const probe = [
      'echo work=$(ls -A /work | tr "\\n" " ")',
      'echo tmp=$(ls -A /tmp | tr "\\n" " ")',
      'echo shm=$(ls -A /dev/shm 2>/dev/null | tr "\\n" " ")',
      'echo left=$(ls /left /root/left /var/tmp/left /etc/left /usr/left 2>/dev/null)',
      'echo env=$(env | grep -c LEFT)',
      'echo pids=$(ls /proc | grep -c "^[0-9]")',
      'echo mounts=$(grep -c " /tmp/d " /proc/self/mounts)',
      // "[l]eft" matches the marker but not this probe's own command line.
      `echo marker=$(grep -l ${marker.replace('left', '[l]eft')} /proc/[0-9]*/cmdline 2>/dev/null | wc -l)`,
    ].join('\n');
    const next = await specFor(probe, { limits });
    await writeFile(join(next.workDir, 'own.txt'), 'own');
    const second = await sandbox.run(next);
    expect(second.exitCode, second.output).toBe(0);
    const seen = parse(second.output);
    expect(seen).toMatchObject({ work: 'own.txt', tmp: '', shm: '', left: '', env: '0', mounts: '0', marker: '0' });
    // The probe's shell, its pipelines and ls: no process of the first gate.
    expect(Number(seen.pids)).toBeLessThan(6);

    // Later, neither work dir got anything from the first gate's background processes.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await readdir(firstSpec.workDir)).toEqual(['left.txt']);
    expect(await readdir(next.workDir)).toEqual(['own.txt']);
  });

  it('learns the exit from its own launcher, which the command cannot impersonate, and keeps stdout and stderr in order', async () => {
    const seen = pool.stats.seenExits;
    const forge = [
      'echo one; echo two >&2; echo three',
      // A status of its own, in every shape the launcher's could take: they stay output.
      'echo "genesis-status-00000000000000000000000000000000:0"; printf "genesis-status-:0\\n" >&2',
      // The output channel: the command may write to it, never read it back or change what it is.
      '{ cat /.genesis-output; } 2>/dev/null && echo READ-OUTPUT',
      '{ chmod 666 /.genesis-output; } 2>/dev/null && echo CHMOD-OUTPUT',
      'echo four > /.genesis-output',
      'exit 3',
    ].join('\n');
    const result = await sandbox.run(await specFor(forge));
    expect(result.exitCode, result.output).toBe(3);
    expect(result.output).toBe('one\ntwo\nthree\ngenesis-status-00000000000000000000000000000000:0\ngenesis-status-:0\nfour\n');
    expect(pool.stats.seenExits).toBe(seen + 1);
  });

  it('keeps what the first gate wrote in its own work dir, and nowhere else', async () => {
    const spec = await specFor('echo mine > mine.txt; ls -A');
    const result = await sandbox.run(spec);
    expect(result.output).toBe('mine.txt\n');
    expect(await readFile(join(spec.workDir, 'mine.txt'), 'utf8')).toBe('mine\n');
    // The tree is unmounted from its slot when the run returns: it can be renamed or removed at once.
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(spec.workDir);
  });

  it('never hands the same container to two gates, and removes each after its run', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1; hostname'));
      ids.push(result.output);
    }
    // Each container has a cgroup of its own, named by its id.
    expect(new Set(ids).size).toBe(3);
    await pool.drain();
    const docker = new Docker();
    const left = await docker.listContainers({ all: true, filters: { label: [`${WARM_POOL_LABEL}=${pool.labels[WARM_POOL_LABEL]}`] } });
    expect(left).toEqual([]);
    // Its slot directories went with them (the pool's root is this process's, shared by no other pool).
    const root = await pool.directory;
    expect(root).toBeDefined();
    expect(execFileSync('sh', ['-c', `ls -A ${root} 2>/dev/null || true`], { encoding: 'utf8' })).toBe('');
  });
});

describe('a warm docker pool keeps every setting of the gate', () => {
  it('holds the protected paths read-only and the dependency mounts read-only in a pooled container', async () => {
    const pool = new WarmPool({ perKey: 1 });
    try {
      const deps = (await specFor('true')).workDir;
      await writeFile(join(deps, 'dep.js'), 'module.exports = 1');
      await chmod(deps, 0o755);
      const spec = await specFor(
        'echo x > test/new; echo y > test/a.js; mv test t2; echo x > node_modules/dep/new; cat node_modules/dep/dep.js; echo; ls test',
        {
          readOnlyPaths: ['test'],
          mounts: [{ source: deps, target: 'node_modules/dep' }],
        },
      );
      await mkdir(join(spec.workDir, 'test'));
      await writeFile(join(spec.workDir, 'test/a.js'), 'original');
      const result = await warmOnly(pool).run(spec);
      expect(result.output).toContain('Read-only file system');
      expect(result.output).toMatch(/mv: cannot move.*(busy|Read-only)/i);
      expect(result.output).toContain('module.exports = 1');
      expect(result.output).toContain('cannot create node_modules/dep/new: Read-only file system');
      expect(await readFile(join(spec.workDir, 'test/a.js'), 'utf8')).toBe('original');
      expect(await readdir(join(spec.workDir, 'test'))).toEqual(['a.js']);
      expect(await readdir(deps)).toEqual(['dep.js']);
    } finally {
      await pool.drain();
    }
  });

  it('holds read-only a protected path whatever its name: spaces, tabs, newlines, backslashes, a leading #', async () => {
    const pool = new WarmPool({ perKey: 1 });
    try {
      const names = ['te st', 'a\tb', 'new\nline', 'back\\slash', '#hash', 'ünï', 'octal\\040'];
      const open = names.map((n) => `${n}-open`);
      const probe = `const fs=require('fs');for(const d of JSON.parse(process.argv[1])){try{fs.writeFileSync(d+'/new','x');console.log('wrote '+JSON.stringify(d))}catch(e){console.log('refused '+JSON.stringify(d)+' '+e.code)}}`;
      const spec = await specFor(`node -e "${probe}" '${JSON.stringify([...names, ...open])}'`, { readOnlyPaths: names });
      for (const dir of [...names, ...open]) await mkdir(join(spec.workDir, dir));
      const result = await warmOnly(pool).run(spec);
      for (const name of names) expect(result.output, result.output).toContain(`refused ${JSON.stringify(name)} EROFS`);
      for (const name of open) expect(result.output, result.output).toContain(`wrote ${JSON.stringify(name)}`);
      for (const name of names) expect(await readdir(join(spec.workDir, name))).toEqual([]);
    } finally {
      await pool.drain();
    }
  });

  it('serves a gate only a container made with its limits: memory and pids hold', async () => {
    const pool = new WarmPool({ perKey: 1 });
    const sandbox = warmOnly(pool);
    try {
      const hog = `node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 24, 1))"`;
      const oom = await sandbox.run(await specFor(hog, { limits: { cpus: 1, memoryMb: 128, pids: 64 } }));
      expect(oom).toMatchObject({ exitCode: 137, oomKilled: true, timedOut: false });
      // A child killed for memory while the command goes on to exit 0: still out of memory, as a fresh container says.
      const seen = pool.stats.seenExits;
      const survived = await sandbox.run(await specFor(`${hog}; echo survived`, { limits: { cpus: 1, memoryMb: 128, pids: 64 } }));
      expect(survived).toMatchObject({ exitCode: 0, oomKilled: true, timedOut: false });
      expect(survived.output).toContain('survived');
      expect(pool.stats.seenExits).toBe(seen + 1);
      await pool.drain();
      const other = new WarmPool({ perKey: 1 });
      try {
        const bomb = 'i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done; echo forked all';
        const forked = await warmOnly(other).run(await specFor(bomb, { limits: { cpus: 1, memoryMb: 128, pids: 32 }, timeoutMs: 10_000 }));
        expect(forked.output).toMatch(/fork/i);
        expect(forked.output).not.toContain('forked all');
      } finally {
        await other.drain();
      }
    } finally {
      await pool.drain();
    }
  });

  it('does not give a container made for one set of limits to a gate with another', async () => {
    const pool = new WarmPool({ perKey: 1 });
    try {
      const sandbox = new DockerSandbox({ image, warm: pool });
      await sandbox.run(await specFor('true', { limits: { cpus: 1, memoryMb: 256, pids: 64 } }));
      for (let i = 0; i < 600 && pool.readyCount === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const hits = pool.stats.hits;
      const result = await sandbox.run(
        await specFor(
          'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max',
          { limits: { cpus: 1, memoryMb: 128, pids: 32 } },
        ),
      );
      expect(pool.stats.hits).toBe(hits);
      expect(result.output).toBe(`${128 * 1024 * 1024}\n32\n`);
      const env = await sandbox.run(await specFor('echo $ONLY_HERE', { limits: { cpus: 1, memoryMb: 256, pids: 64 }, env: { ONLY_HERE: 'yes' } }));
      expect(pool.stats.hits).toBe(hits);
      expect(env.output).toBe('yes\n');
    } finally {
      await pool.drain();
    }
  });
});

/** Runs the fixture that uses the shared pool; resolves with its pid once it printed `ready`. */
function child(mode: 'end' | 'wait'): Promise<{ pid: number; ready: number; exited: Promise<number | null> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/sandbox/warm-pool-child.ts', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+) (\d+)/.exec(out);
      if (match) resolve({ pid: Number(match[1]), ready: Number(match[2]), exited });
    });
    proc.once('exit', (code) => reject(new Error(`the child exited (${code}) before it was ready: ${out}`)));
  });
}

async function containersOf(pid: number): Promise<string[]> {
  const docker = new Docker();
  const owner = `${(await import('node:os')).hostname()}/${pid}`;
  return (await docker.listContainers({ all: true, filters: { label: [`${WARM_OWNER_LABEL}=${owner}`] } })).map((c) => c.Id);
}

describe('a warm docker pool leaves nothing behind', () => {
  it('after a process that used it ends normally: no container, no slot directory', async () => {
    const run = await child('end');
    expect(run.ready).toBeGreaterThan(0);
    expect(await run.exited).toBe(0);
    expect(await containersOf(run.pid)).toEqual([]);
    expect(execFileSync('sh', ['-c', `ls -d /tmp/genesis-warm-${run.pid}-* 2>/dev/null || true`], { encoding: 'utf8' })).toBe('');
  });

  it('after a process that used it is killed: the next pool to start removes its containers and slots', async () => {
    const run = await child('wait');
    expect(run.ready).toBeGreaterThan(0);
    expect((await containersOf(run.pid)).length).toBeGreaterThan(0);
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    // Its slot's mounts outlive it (they are this host's, not the process's) until the clean-up.
    expect(await removeStale(new Docker())).toBeGreaterThan(0);
    expect(await containersOf(run.pid)).toEqual([]);
    expect(execFileSync('sh', ['-c', `ls -d /tmp/genesis-warm-${run.pid}-* 2>/dev/null || true`], { encoding: 'utf8' })).toBe('');
    expect(await readFile('/proc/self/mountinfo', 'utf8')).not.toContain(`genesis-warm-${run.pid}-`);
  });
});

describe('a warm docker pool under concurrent gates', () => {
  it('keeps more ready once gates overlap beyond it, never more than its max, each container used once', async () => {
    const pool = new WarmPool({ perKey: 1, max: 3 });
    const sandbox = new DockerSandbox({ image, warm: pool });
    const settled = async () => {
      for (let i = 0; i < 1200 && (pool.filling || pool.readyCount === 0); i++) await new Promise((r) => setTimeout(r, 50));
    };
    try {
      await sandbox.run(await specFor('true'));
      await settled();
      expect(pool.readyCount).toBe(1);
      const batch = async (n: number) =>
        Promise.all(Array.from({ length: n }, async () => (await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1'))).output));
      const before = { ...pool.stats };
      const first = await batch(4);
      expect(pool.stats.hits - before.hits).toBe(1);
      await settled();
      // Three of the four found none while another ran: the pool keeps its max, 3, ready now.
      expect(pool.readyCount).toBe(3);
      const mid = { ...pool.stats };
      const second = await batch(3);
      expect(pool.stats.hits - mid.hits).toBe(3);
      expect(new Set([...first, ...second]).size).toBe(7);
    } finally {
      await pool.drain();
    }
  });
});

describe('a warm docker pool whose containers died', () => {
  it('runs the gate in a fresh container at once when the ready one was killed (as a daemon restart does)', async () => {
    const pool = new WarmPool({ perKey: 1 });
    const sandbox = new DockerSandbox({ image, warm: pool });
    try {
      await sandbox.run(await specFor('true'));
      for (let i = 0; i < 1200 && (pool.filling || pool.readyCount === 0); i++) await new Promise((r) => setTimeout(r, 50));
      const docker = new Docker();
      const ready = await docker.listContainers({ filters: { label: [`${WARM_POOL_LABEL}=${pool.labels[WARM_POOL_LABEL]}`] } });
      expect(ready).toHaveLength(1);
      await docker.getContainer(ready[0]!.Id).kill();
      const started = Date.now();
      const result = await sandbox.run(await specFor('echo fresh'));
      expect(result).toMatchObject({ exitCode: 0, output: 'fresh\n' });
      // Beyond the fresh run itself (create to exit), finding the dead one cost far less than the 5 s it would wait for a slow one.
      expect(Date.now() - started - result.durationMs).toBeLessThan(2_500);
      // Not turned off by one dead container: it refills and serves the next run.
      for (let i = 0; i < 1200 && (pool.filling || pool.readyCount === 0); i++) await new Promise((r) => setTimeout(r, 50));
      const hits = pool.stats.hits;
      expect((await sandbox.run(await specFor('echo warm'))).output).toBe('warm\n');
      expect(pool.stats.hits).toBe(hits + 1);
    } finally {
      await pool.drain();
    }
  });
});
