import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lstatInside, resolveLinkInside } from '../../../src/sandbox/gate/contained-path.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('paths inside a root', () => {
  it('resolves links that stay inside, and refuses absolute ones, ones that climb out, and a `..` after a name', () => {
    expect(resolveLinkInside('node_modules/foo', '.pnpm/foo@1/node_modules/foo')).toBe('node_modules/.pnpm/foo@1/node_modules/foo');
    expect(resolveLinkInside('node_modules/.bin/semver', '../semver/bin/semver.js')).toBe('node_modules/semver/bin/semver.js');
    expect(resolveLinkInside('node_modules/up', '..')).toBe('');
    expect(resolveLinkInside('node_modules/root', '../..')).toBeNull();
    expect(resolveLinkInside('node_modules/abs', '/')).toBeNull();
    expect(resolveLinkInside('node_modules/a/out', 'up/../../..')).toBeNull();
    expect(resolveLinkInside('node_modules/a/x', 'b/../c')).toBeNull();
  });

  it('never follows a link on the way nor at the end', async () => {
    const root = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'victim.xml'), 'x');
    await mkdir(join(root, 'real'));
    await writeFile(join(root, 'real', 'a.xml'), 'x');
    await symlink(outside, join(root, 'reports'));
    await symlink(join(outside, 'victim.xml'), join(root, 'real', 'link.xml'));
    expect((await lstatInside(root, 'real/a.xml'))?.isFile()).toBe(true);
    expect(await lstatInside(root, 'reports/victim.xml')).toBeNull();
    expect((await lstatInside(root, 'reports'))?.isSymbolicLink()).toBe(true);
    expect((await lstatInside(root, 'real/link.xml'))?.isSymbolicLink()).toBe(true);
    expect(await lstatInside(root, '../x')).toBeNull();
    expect(await lstatInside(root, '/etc/passwd')).toBeNull();
    expect(await lstatInside(root, 'real/a.xml/more')).toBeNull();
  });
});
