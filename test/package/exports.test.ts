// The public surface is deliberate: this list changes only on purpose, with the README and a version.
import * as toolgate from '../../src/index';
import { PUBLIC_VALUES } from './public-values';

describe('the package entry', () => {
  test('exports exactly the public values, nothing internal', () => {
    expect(Object.keys(toolgate).sort()).toEqual(PUBLIC_VALUES);
  });

  test('exports each name once, so no factory has two signatures', () => {
    const names = Object.keys(toolgate);
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain('requireTool');
    expect(names).not.toContain('toolRun');
  });
});
