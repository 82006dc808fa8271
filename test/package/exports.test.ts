// The public surface is deliberate: this list changes only on purpose, with the README and a version.
import * as toolgate from '../../src/index';
import { PUBLIC_VALUES } from './public-values';

describe('the package entry', () => {
  test('exports exactly the public values, nothing internal', () => {
    expect(Object.keys(toolgate).sort()).toEqual(PUBLIC_VALUES);
  });

  // A module's keys are unique by construction; what could go wrong is a second, bare signature.
  test('does not export the bare requireTool and toolRun factories: each is reached through a toolgate, with one signature', () => {
    const names = Object.keys(toolgate);
    expect(names).not.toContain('requireTool');
    expect(names).not.toContain('toolRun');
  });
});
