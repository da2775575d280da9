import { describe, expect, it } from 'vitest';
import { checkChange, DEFAULT_PRE_GATE_LIMITS } from '../../../src/gate/pre-gate.js';
import type { PreGateRules, PreGateVerdict } from '../../../src/gate/pre-gate.js';
import type { ChangedEntry } from '../../../src/git/tree/diff.js';

const rules: PreGateRules = {
  protected: ['test/**', 'world.yaml'],
  taskPaths: ['src/add.js', 'src/lib'],
  ...DEFAULT_PRE_GATE_LIMITS,
};

function file(path: string, overrides: Partial<ChangedEntry> = {}): ChangedEntry {
  return { path, change: 'modified', mode: '100644', size: 100, ...overrides };
}

function deleted(path: string): ChangedEntry {
  return { path, change: 'deleted', mode: '', size: 0 };
}

function symlink(path: string, target: string | undefined): ChangedEntry {
  return { path, change: 'added', mode: '120000', size: target?.length ?? 0, ...(target === undefined ? {} : { symlinkTarget: target }) };
}

function rejection(verdict: PreGateVerdict): Extract<PreGateVerdict, { ok: false }> {
  if (verdict.ok) throw new Error('expected the change to be rejected');
  return verdict;
}

describe('checkChange', () => {
  it('accepts a change inside the task paths and counts files and bytes written', () => {
    const verdict = checkChange([file('src/add.js', { size: 120 }), file('src/lib/util.js', { change: 'added' }), deleted('src/lib/old.js')], rules);
    expect(verdict).toEqual({ ok: true, files: 3, bytes: 220 });
  });

  it('rejects an empty change', () => {
    const verdict = rejection(checkChange([], rules));
    expect(verdict.reason).toBe('empty-change');
    expect(verdict.message).toMatch(/the change is empty/);
  });

  describe('when an episode attacks the acceptance tests or the manifest', () => {
    it('rejects a change to a protected test', () => {
      const verdict = rejection(checkChange([file('src/add.js'), file('test/add.test.js')], rules));
      expect(verdict).toMatchObject({ reason: 'protected-path', paths: ['test/add.test.js'] });
      expect(verdict.message).toBe(
        'changes protected path test/add.test.js (protected: test/**, world.yaml); an episode may not edit acceptance tests or the manifest',
      );
    });

    it('rejects the deletion of a protected test', () => {
      const verdict = rejection(checkChange([file('src/add.js'), deleted('test/add.test.js')], rules));
      expect(verdict).toMatchObject({ reason: 'protected-path', paths: ['test/add.test.js'] });
    });

    it("rejects an edit of world.yaml's verify commands", () => {
      const verdict = rejection(checkChange([file('world.yaml')], rules));
      expect(verdict).toMatchObject({ reason: 'protected-path', paths: ['world.yaml'] });
      expect(verdict.message).toContain('changes protected path world.yaml');
    });

    it('says protected before outside when a path is both', () => {
      expect(rejection(checkChange([file('test/helper.js', { change: 'added' })], rules)).reason).toBe('protected-path');
    });
  });

  describe('when a path is unsafe', () => {
    const unsafe: [string, string][] = [
      ['a traversal out of the tree', '../outside.js'],
      ['a traversal in the middle', 'src/../../etc/passwd'],
      ['an absolute path', '/etc/passwd'],
      ['a backslash', 'src\\add.js'],
      ['a control character', 'src/add.js\nworld.yaml'],
      ['an empty segment', 'src//add.js'],
      ['a "." segment', 'src/./add.js'],
      ['a git hook', '.git/hooks/pre-commit'],
      ['a nested .git directory', 'src/lib/.git/config'],
      ['a case-folded .git directory', '.GIT/config'],
    ];

    it.each(unsafe)('rejects %s', (_, path) => {
      const verdict = rejection(checkChange([file(path)], rules));
      expect(verdict).toMatchObject({ reason: 'unsafe-path', paths: [path] });
      expect(verdict.message).toMatch(/paths must be relative, use "\/", and have no empty, "\.", "\.\." or \.git segments/);
    });

    it('quotes a path with control characters so the message stays one line', () => {
      const verdict = rejection(checkChange([file('src/a\nb.js')], rules));
      expect(verdict.message).toContain('"src/a\\nb.js"');
      expect(verdict.message).not.toContain('\n');
    });
  });

  describe('when the change touches git metadata', () => {
    it.each(['.gitattributes', 'src/lib/.gitattributes', '.gitmodules', '.lfsconfig'])('rejects %s', (path) => {
      const verdict = rejection(checkChange([file(path, { change: 'added' })], { ...rules, taskPaths: ['**'] }));
      expect(verdict).toMatchObject({ reason: 'git-metadata', paths: [path] });
      expect(verdict.message).toMatch(/can run code or pull content from outside the world/);
    });

    it('rejects a submodule (gitlink) even inside the task paths', () => {
      const verdict = rejection(checkChange([file('src/lib/vendor', { change: 'added', mode: '160000', size: 0 })], rules));
      expect(verdict).toMatchObject({ reason: 'git-metadata', paths: ['src/lib/vendor'] });
    });
  });

  describe('when the change leaves the task paths', () => {
    it("rejects a file outside the task's paths and names what is allowed", () => {
      const verdict = rejection(checkChange([file('src/add.js'), file('src/sub.js', { change: 'added' })], rules));
      expect(verdict).toMatchObject({ reason: 'outside-paths', paths: ['src/sub.js'] });
      expect(verdict.message).toBe("changes path src/sub.js outside the task's paths (allowed: src/add.js, src/lib)");
    });

    it('counts a deletion outside the task paths', () => {
      expect(rejection(checkChange([deleted('README.md')], rules)).reason).toBe('outside-paths');
    });

    it('names the first few paths and counts the rest', () => {
      const paths = ['a.js', 'b.js', 'c.js', 'd.js', 'e.js'];
      const verdict = rejection(
        checkChange(
          paths.map((p) => file(p)),
          rules,
        ),
      );
      expect(verdict.paths).toEqual(paths);
      expect(verdict.message).toContain('changes paths a.js, b.js, c.js and 2 more outside');
    });

    it('says so when the task lists no paths at all', () => {
      expect(rejection(checkChange([file('src/add.js')], { ...rules, taskPaths: [] })).message).toContain('(allowed: none)');
    });
  });

  describe('when the change adds a symlink', () => {
    it.each([
      ['src/lib/link.js', 'util.js'],
      ['src/lib/deep/link.js', '../util.js'],
      ['src/lib/to-root', '../..'],
      ['src/lib/to-test', '../../test/add.test.js'],
    ])('accepts %s -> %s, which stays inside the tree', (path, target) => {
      expect(checkChange([symlink(path, target)], rules).ok).toBe(true);
    });

    it.each([
      ['an absolute target', 'src/lib/passwd', '/etc/passwd'],
      ['a target above the root', 'src/lib/up', '../../../outside'],
      ['a ".." after a name, which can climb through another link', 'src/lib/sneaky', 'd/../../../..'],
      ['a target inside .git', 'src/lib/hooks', '../../.git/hooks'],
      ['an empty target', 'src/lib/empty', ''],
      ['an unknown target', 'src/lib/unknown', undefined],
    ])('rejects %s', (_, path, target) => {
      const verdict = rejection(checkChange([symlink(path, target)], rules));
      expect(verdict).toMatchObject({ reason: 'symlink-escape', paths: [path] });
      expect(verdict.message).toContain(`leaving the tree: ${path} -> `);
    });

    it('rejects a file turned into a symlink that points outside', () => {
      const verdict = rejection(checkChange([{ ...symlink('src/add.js', '/etc/shadow'), change: 'type-changed' }], rules));
      expect(verdict.message).toContain('src/add.js -> /etc/shadow');
    });
  });

  describe('when the change is too large', () => {
    it('rejects a file over the size limit', () => {
      const verdict = rejection(checkChange([file('src/add.js', { size: DEFAULT_PRE_GATE_LIMITS.maxFileBytes + 1 })], rules));
      expect(verdict).toMatchObject({ reason: 'size-limit', paths: ['src/add.js'] });
      expect(verdict.message).toContain(`1 file over the limit of ${DEFAULT_PRE_GATE_LIMITS.maxFileBytes} bytes per file: src/add.js (1048577 bytes)`);
    });

    it('lets a file the accepted head holds grow by the per-file limit over its size there, and no more', () => {
      const max = DEFAULT_PRE_GATE_LIMITS.maxFileBytes;
      const kept = file('src/lib/page.html', { size: max + 100_000, baseSize: 800_000 });
      expect(checkChange([kept], rules)).toMatchObject({ ok: true });
      const swollen = file('src/lib/small.js', { size: max + 2_001, baseSize: 2_000 });
      expect(rejection(checkChange([swollen], rules))).toMatchObject({ reason: 'size-limit', paths: ['src/lib/small.js'] });
      // A new file has no size on the head to grow from, whatever its path held before it was deleted.
      expect(rejection(checkChange([file('src/lib/new.html', { change: 'added', size: max + 1 })], rules)).reason).toBe('size-limit');
    });

    it('rejects a change whose files together exceed the change limit', () => {
      const entries = [1, 2, 3].map((i) => file(`src/lib/f${i}.js`, { size: 400 }));
      const verdict = rejection(checkChange(entries, { ...rules, maxFileBytes: 500, maxChangeBytes: 1000 }));
      expect(verdict.reason).toBe('size-limit');
      expect(verdict.message).toContain('writes 1200 bytes in total, over the limit of 1000');
    });

    it('rejects a change with more files than allowed', () => {
      const entries = [1, 2, 3].map((i) => file(`src/lib/f${i}.js`));
      const verdict = rejection(checkChange(entries, { ...rules, maxFiles: 2 }));
      expect(verdict.reason).toBe('size-limit');
      expect(verdict.message).toContain('touches 3 files, over the limit of 2');
    });

    it('does not count deleted files against the byte limits', () => {
      expect(checkChange([deleted('src/lib/huge.bin')], { ...rules, maxFileBytes: 0, maxChangeBytes: 0 }).ok).toBe(true);
    });
  });

  it('has defaults of 1 MiB per file, 10 MiB per change and 500 files', () => {
    expect(DEFAULT_PRE_GATE_LIMITS).toEqual({ maxFileBytes: 1_048_576, maxChangeBytes: 10_485_760, maxFiles: 500 });
  });

  describe('when a change uses a name Genesis reserves', () => {
    it.each(['.genesis-holdout', '.genesis-holdout/a.test.js', 'src/lib/.genesis-holdout', 'src/lib/.GENESIS-Report.xml', 'src/lib/.genesis-anything/x'])(
      'rejects %s, naming it',
      (path) => {
        const verdict = rejection(checkChange([file(path, { change: 'added' })], { ...rules, taskPaths: ['**'] }));
        expect(verdict).toMatchObject({ reason: 'reserved-name', paths: [path] });
        expect(verdict.message).toContain('.genesis-');
      },
    );

    it('leaves other dot names alone', () => {
      expect(checkChange([file('src/lib/.genesis', { change: 'added' }), file('src/lib/.genesisrc', { change: 'added' })], rules).ok).toBe(true);
    });
  });

  describe('when a path is longer or deeper than any source tree needs', () => {
    it('rejects it as unsafe before any tool has to handle it', () => {
      const deep = `src/lib/${'d/'.repeat(70)}f.js`;
      const long = `src/lib/${'x'.repeat(1100)}.js`;
      for (const path of [deep, long]) expect(rejection(checkChange([file(path, { change: 'added' })], rules)).reason).toBe('unsafe-path');
      expect(checkChange([file(`src/lib/${'d/'.repeat(50)}f.js`, { change: 'added' })], rules).ok).toBe(true);
    });
  });

  describe('when the handoff file must stay a regular file', () => {
    const handoff = { ...rules, taskPaths: [...rules.taskPaths, 'PROGRESS.md'], regularFiles: ['PROGRESS.md'] };

    it('accepts appending to it, by any task', () => {
      expect(checkChange([file('src/add.js'), file('PROGRESS.md')], handoff).ok).toBe(true);
    });

    it('rejects a directory at its path with files under it, a symlink there, or deleting it', () => {
      const cases: ChangedEntry[][] = [
        [deleted('PROGRESS.md'), file('PROGRESS.md/notes.md', { change: 'added' })],
        [file('PROGRESS.md/a/b.js', { change: 'added' })],
        [{ ...symlink('PROGRESS.md', 'src/add.js'), change: 'type-changed' }],
        [deleted('PROGRESS.md')],
      ];
      for (const entries of cases) {
        const verdict = rejection(checkChange(entries, handoff));
        expect(verdict.reason).toBe('not-a-regular-file');
        expect(verdict.message).toContain('PROGRESS.md must stay a regular file');
      }
    });

    it('holds even when the task paths would cover a directory there', () => {
      expect(rejection(checkChange([file('PROGRESS.md/x', { change: 'added' })], { ...handoff, taskPaths: ['**'] })).reason).toBe('not-a-regular-file');
    });
  });
});
