import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';

describe('the public API', () => {
  it('exports every helper from one entry point', () => {
    expect(Object.keys(lib).sort()).toEqual(['VERSION', 'camelCase', 'kebabCase', 'latest', 'pascalCase', 'satisfying', 'slugify', 'snakeCase', 'words']);
    expect(lib.kebabCase(lib.slugify('Déjà Vu'))).toBe('deja-vu');
  });
});
