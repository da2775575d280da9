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

  it('gives the next gate in the same container nothing the last one left: files, IPC, processes, mounts, environment', async () => {
    const marker = `genesis-warm-left-${randomUUID()}`;
    const leave = [
      'cat /proc/self/cgroup | tail -1',
      'echo left > /work/left.txt; echo left > /tmp/left; mkdir -p /tmp/d && echo left > /tmp/d/f',
      // Names and shapes a careless wipe trips on: hidden, dash-first, unreadable, deep, links out of the tmpfs.
      'echo left > /tmp/.hidden; echo left > /tmp/-rf; mkdir -p /tmp/deep/a/b/c && echo left > /tmp/deep/a/b/c/f; mkdir /tmp/locked && echo left > /tmp/locked/f && chmod 000 /tmp/locked',
      'ln -s /work /tmp/to-work; ln -s / /tmp/to-root; ln -s /work /dev/shm/to-work',
      'echo left > /dev/shm/left; for p in /root / /var/tmp /etc /usr /dev; do { echo left > $p/left; } 2>/dev/null && echo WROTE-$p; done',
      // System V IPC objects and a POSIX message queue outlive their processes: the host removes them.
      'ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null; : > /dev/mqueue/left',
      // The FIFO the command came through: neither writable nor a way to talk to the next gate.
      '{ echo left > /.genesis-command; } 2>/dev/null && echo WROTE-FIFO',
      // The launcher and the init that outlive the gate: another user's, so neither killable, stoppable nor readable.
      '{ kill -STOP $PPID; } 2>/dev/null && echo STOPPED-LAUNCHER; { kill -9 $PPID 1; } 2>/dev/null && echo KILLED-LAUNCHER',
      '{ cat /proc/$PPID/environ; } 2>/dev/null && echo READ-LAUNCHER',
      // Background processes of every kind, each of which would write into the work dir later.
      `(setsid sh -c 'sleep 2; echo late > /work/late-setsid; sleep 60' ${marker} &)`,
      `nohup sh -c 'sleep 2; echo late > /work/late-nohup; sleep 60' ${marker} >/dev/null 2>&1 &`,
      `sh -c "sh -c 'sleep 2; echo late > /work/late-fork; sleep 60 ${marker}' &" &`,
      // One that keeps forking, one that stopped itself, one that ignores every signal it may.
      `sh -c 'while :; do (sleep 30 &); sleep 0.01; done' ${marker} &`,
      `sh -c 'kill -STOP $$; echo late > /work/late-stopped ${marker}' &`,
      `sh -c 'trap "" TERM HUP INT QUIT USR1 USR2; sleep 60; echo ${marker}' &`,
      '{ mount -t tmpfs none /tmp/d; } 2>/dev/null && echo MOUNTED',
      'export LEFT=1; echo "export LEFT=1" > /tmp/.profile; echo "LEFT=1" >> /tmp/.bashrc',
      'sleep 0.2; echo done',
    ].join('\n');
    const firstSpec = await specFor(leave, { limits });
    const first = await sandbox.run(firstSpec);
    expect(first.exitCode, first.output).toBe(0);
    const [container, ...rest] = first.output.split('\n');
    expect(rest.join('\n')).toBe('done\n');
    // Gone before the run returned: the host killed every process the gate left.
    expect(processesWith(marker)).toBe('');

    const probe = [
      'cat /proc/self/cgroup | tail -1',
      'echo work=$(ls -A /work | tr "\\n" " ")',
      'echo tmp=$(ls -A /tmp | tr "\\n" " ")',
      'echo shm=$(ls -A /dev/shm 2>/dev/null | tr "\\n" " ")',
      'echo mqueue=$(ls -A /dev/mqueue 2>/dev/null | tr "\\n" " ")',
      'echo sysv=$(cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | grep -vc "^ *key")',
      'echo left=$(ls /left /root/left /var/tmp/left /etc/left /usr/left /dev/left 2>/dev/null)',
      'echo env=$(env | grep -c LEFT)',
      // Besides this probe's own processes: docker-init and the launcher, both root, and nothing else.
      'echo others=$(for p in /proc/[0-9]*; do [ "$(stat -c %u $p)" = 0 ] && tr "\\0\\n" "  " < $p/cmdline | cut -c1-20; done | sort | tr "\\n" "|")',
      'echo mounts=$(grep -c " /tmp/d " /proc/self/mounts)',
      'echo sleeps=$(grep -l "^sleep" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)',
      // "[l]eft" matches the marker but not this probe's own command line.
      `echo marker=$(grep -l ${marker.replace('left', '[l]eft')} /proc/[0-9]*/cmdline 2>/dev/null | wc -l)`,
    ].join('\n');
    const next = await specFor(probe, { limits });
    await writeFile(join(next.workDir, 'own.txt'), 'own');
    const reused = pool.stats.reused;
    const second = await sandbox.run(next);
    expect(second.exitCode, second.output).toBe(0);
    // The same container served both gates.
    expect(pool.stats.reused).toBe(reused + 1);
    expect(second.output.split('\n')[0]).toBe(container);
    const seen = parse(second.output);
    expect(seen).toMatchObject({ work: 'own.txt', tmp: '', shm: '', mqueue: '', sysv: '0', left: '', env: '0', mounts: '0', marker: '0', sleeps: '0' });
    expect(seen.others).toBe('/bin/sh -c p=/usr/bi|/sbin/docker-init --|');

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
      // The output channel: the command writes to it through its stdout only, never opens, reads or changes it.
      '{ cat /.genesis-output; } 2>/dev/null && echo READ-OUTPUT',
      '{ chmod 666 /.genesis-output; } 2>/dev/null && echo CHMOD-OUTPUT',
      '{ echo four > /.genesis-output; } 2>/dev/null && echo WROTE-OUTPUT',
      'echo four',
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

  it('serves one gate at a time with a container, at most maxUses of them, and removes every container on drain', async () => {
    const pool = new WarmPool({ perKey: 1, maxUses: 2 });
    const sandbox = warmOnly(pool);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1'))).output);
    // Each container has a cgroup of its own, named by its id: two gates each, then a new container.
    expect(ids[1]).toBe(ids[0]);
    expect(ids[3]).toBe(ids[2]);
    expect(ids[2]).not.toBe(ids[1]);
    await pool.drain();
    const docker = new Docker();
    const left = await docker.listContainers({ all: true, filters: { label: [`${WARM_POOL_LABEL}=${pool.labels[WARM_POOL_LABEL]}`] } });
    expect(left).toEqual([]);
    // Its slot directories went with them (the pool's root is this process's, shared by no other pool).
    const root = await pool.directory;
    expect(root).toBeDefined();
    expect(execFileSync('sh', ['-c', `ls -A ${root} 2>/dev/null || true`], { encoding: 'utf8' })).toBe('');
  });

  it('removes a container whose gate timed out, and gives the next gate another', async () => {
    const pool = new WarmPool({ perKey: 1 });
    const sandbox = warmOnly(pool);
    try {
      const stuck = await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1; sleep 30', { timeoutMs: 1_500 }));
      expect(stuck).toMatchObject({ exitCode: 137, timedOut: true });
      const next = await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1'));
      expect(next.output).not.toBe(stuck.output);
      expect(pool.stats.reused).toBe(0);
    } finally {
      await pool.drain();
    }
  });
});

describe('a warm docker pool told not to reuse containers', () => {
  it('gives every gate a container of its own (GENESIS_WARM_REUSE=0)', async () => {
    const pool = new WarmPool({ perKey: 1, reuse: false });
    try {
      const sandbox = warmOnly(pool);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await sandbox.run(await specFor('cat /proc/self/cgroup | tail -1'))).output);
      expect(ids[1]).not.toBe(ids[0]);
      expect(pool.stats.reused).toBe(0);
      const docker = new Docker();
      const filters = { label: [`${WARM_POOL_LABEL}=${pool.labels[WARM_POOL_LABEL]}`] };
      // The one made ready after the last run, at least: the pool makes it in the background, so it may still be coming.
      let modes = await docker.listContainers({ all: true, filters });
      for (let i = 0; i < 100 && modes.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        modes = await docker.listContainers({ all: true, filters });
      }
      expect(modes.length).toBeGreaterThan(0);
      expect(modes.map((c) => c.Labels['genesis.warm.mode'])).toEqual(modes.map(() => 'once'));
    } finally {
      await pool.drain();
    }
  });
});

describe('a warm docker pool with an image it cannot reuse containers of', () => {
  const bare = 'genesis-test/no-setpriv';
  it('uses each container once when the image has no setpriv, and a command sees the same process either way', async () => {
    execFileSync('docker', ['build', '-q', '-t', bare, '-'], {
      input: `FROM ${image}\nUSER root\nRUN rm -f /usr/bin/setpriv /bin/setpriv\nUSER 1000\n`,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const pool = new WarmPool({ perKey: 1 });
    try {
      await new DockerSandbox({ image: bare, warm: pool }).run(await specFor('true'));
      for (let i = 0; i < 600 && pool.reuseRefusals().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(pool.reuseRefusals()).toEqual(['the image has no setpriv']);
      const sandbox = warmOnly(pool, bare);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await sandbox.run(await specFor('id -u; cat /proc/self/cgroup | tail -1'))).output);
      // A one-use container runs as a uid the pool leased for it alone.
      expect(Number(ids[0]!.split('\n')[0])).toBeGreaterThanOrEqual(100_000);
      expect(ids[1]).not.toBe(ids[0]);
      expect(pool.stats.reused).toBe(0);
      // What a command is, seen from inside, is the same in a reused container and in one used once.
      const self = 'grep -E "^(Uid|Gid|Groups|Cap|NoNewPrivs|Seccomp)" /proc/self/status; env | sort; echo "$0 $#"; umask; ulimit -a; pwd';
      const reusePool = new WarmPool({ perKey: 1 });
      try {
        const reused = warmOnly(reusePool);
        await reused.run(await specFor('true'));
        const inReused = await reused.run(await specFor(self));
        expect(reusePool.stats.reused).toBe(1);
        const inOnce = await sandbox.run(await specFor(self));
        expect(inReused.output).toContain('CapBnd:\t0000000000000000');
        // Each runs as the uid leased for it: the same but for that number.
        const uids = (text: string) => text.replace(/\b1\d{5}\b/g, '<uid>');
        expect(uids(inReused.output)).toBe(uids(inOnce.output));
      } finally {
        await reusePool.drain();
      }
    } finally {
      await pool.drain();
    }
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
    // At once: nothing of the pool (a container that served a gate and still runs, a wait on it) keeps the process alive.
    const hung = new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000).unref());
    expect(await Promise.race([run.exited, hung])).toBe(0);
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
  it('keeps more ready once gates overlap beyond it, never more than its max, one gate at a time in each', async () => {
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
      // Gates at the same time never share a container (the first batch: one pooled, three fresh).
      expect(new Set(first).size).toBe(4);
      expect(new Set(second).size).toBe(3);
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
