// The README's plugin example is the tested file, word for word.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

test('the README shows examples/host-app.ts verbatim, as a TypeScript block', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const example = readFileSync(path.join(ROOT, 'examples', 'host-app.ts'), 'utf8');
  expect(readme).toContain('```ts\n' + example + '```');
});

test('no link in the README or the docs leaves the repository', () => {
  const docs = [
    'README.md',
    ...['SEMANTICS.md', 'HTTP.md', 'ERRORS.md', 'DECISIONS.md', 'SECURITY.md', 'MIGRATING.md', 'LEGACY-API.md'].map((f) =>
      path.join('docs', f),
    ),
  ];
  for (const file of docs) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect({
      file,
      outside: links.filter((l) => /^[a-z]+:/i.test(l) || l.startsWith('../../') || (file === 'README.md' && l.startsWith('../'))),
    }).toEqual({ file, outside: [] });
    expect({ file, shared: text.includes('../shared') }).toEqual({ file, shared: false });
  }
});

test('each curl line of the README ends its answer with a newline, so each answer is printed on its own line', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  // A command is a curl line with its continuation lines (a trailing backslash).
  const commands = blocks.flatMap((block) => block.replace(/\\\n/g, ' ').split('\n')).filter((line) => /^\s*curl\s/.test(line));
  expect(commands.length).toBeGreaterThan(20);
  expect(commands.filter((command) => !/\s-w '\\n'(\s|$)/.test(command))).toEqual([]);
});

test('the README installs the plugin as test/package installs it: the packed tarball of this version, beside exactly the required peers', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    scripts: Record<string, string>;
  };
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('npm pack'));
  const lines = (block ?? '').split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  const required = Object.keys(manifest.peerDependencies).filter((p) => !manifest.peerDependenciesMeta[p]?.optional);
  expect(lines[0]).toBe('npm install && npm pack');
  const [npm, install, tarball, ...peers] = lines[1]!.split(/\s+/);
  expect([npm, install, tarball]).toEqual(['npm', 'install', `/path/to/toolgate/toolgate-${manifest.version}.tgz`]);
  expect(peers.sort()).toEqual(required.sort());
  // What builds the tarball, as the README says: prepack, and no prepare.
  expect(readme).toContain('`prepack` script');
  expect(Object.keys(manifest.scripts)).not.toContain('prepare');
});
