// The error registry is said in one place: every code the source gives is in src/errors.ts's tables,
// every code of the tables is in docs/ERRORS.md and nothing else is, and every HttpError subclass is
// declared in src/errors.ts, so that its status can only come from ERROR_CODES.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_ERROR_CODES, ERROR_CODES, ToolgateConfigError } from '../../src/errors';

const ROOT = path.resolve(__dirname, '..', '..');
const SOURCE_DIRS = ['src', 'middleware', 'routes', 'models', 'migrations', 'bin', 'scripts'];
const REGISTRY = 'src/errors.ts';

/** Every source file (not the tests), as a path from the root and its text. */
function sourceFiles(): { file: string; text: string }[] {
  const files: { file: string; text: string }[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(path.join(ROOT, dir))) return; // a folder this checkout does not have
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
        files.push({ file, text: readFileSync(path.join(ROOT, file), 'utf8') });
    }
  };
  SOURCE_DIRS.forEach(walk);
  return files;
}

/** The rows of the first table under a `## heading` of docs/ERRORS.md, as trimmed cells. */
function tableUnder(heading: string): string[][] {
  const doc = readFileSync(path.join(ROOT, 'docs', 'ERRORS.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`docs/ERRORS.md has no section "## ${heading}"`);
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  // The header and the |---| line go; every other row is a code.
  return rows.slice(2).map((row) =>
    row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );
}

const unquoted = (cell: string): string => cell.replace(/^<a id="[a-z_]+"><\/a>/, '').replace(/^`|`$/g, '');
const sorted = (list: Iterable<string>): string[] => [...new Set(list)].sort();

const sources = sourceFiles();

/** The names of the classes that extend HttpError, directly or through another, wherever declared. */
function httpErrorClasses(): Set<string> {
  const extensions = sources.flatMap(({ text }) =>
    [...text.matchAll(/class\s+(\w+)\s+extends\s+(\w+)/g)].map((m) => ({ name: m[1]!, base: m[2]! })),
  );
  const classes = new Set(['HttpError']);
  for (let grew = true; grew;) {
    grew = false;
    for (const { name, base } of extensions) {
      if (classes.has(base) && !classes.has(name)) {
        classes.add(name);
        grew = true;
      }
    }
  }
  return classes;
}

/** Every response code the source gives: each HttpError's super('code'), a code passed to one, and a `code:` a route writes itself. */
function httpCodesInSource(): string[] {
  const classes = [...httpErrorClasses()].join('|');
  const given = new RegExp(`(?:super|new\\s+(?:${classes}))\\(\\s*'([a-z][a-z0-9_]*)'\\s*[,)]`, 'g');
  return sorted(
    sources.flatMap(({ text }) => [
      ...[...text.matchAll(given)].map((m) => m[1]!),
      // A route that answers an error itself, outside the handler (the health checks).
      ...[...text.matchAll(/\.json\(\{[^}]*\bcode:\s*'([a-z][a-z0-9_]*)'/g)].map((m) => m[1]!),
    ]),
  );
}

describe('the HTTP error codes', () => {
  test('docs/ERRORS.md lists every code of ERROR_CODES with its status, and no other code', () => {
    const documented = tableUnder('HTTP errors').map(([status, code]) => ({ code: unquoted(code!), status: Number(status) }));
    const registered = Object.entries(ERROR_CODES).map(([code, { status }]) => ({ code, status }));
    const byCode = (a: { code: string }, b: { code: string }) => a.code.localeCompare(b.code);
    expect(documented.sort(byCode)).toEqual(registered.sort(byCode));
  });

  test('every code the source gives is in ERROR_CODES, and ERROR_CODES holds none the source never gives', () => {
    expect(httpCodesInSource()).toEqual(sorted(Object.keys(ERROR_CODES)));
  });

  test("every HttpError subclass is declared in src/errors.ts, so its status is its code's", () => {
    const outside = sources
      .filter(({ file }) => file !== REGISTRY)
      .flatMap(({ file, text }) => [...text.matchAll(/class\s+(\w+)\s+extends\s+HttpError\b/g)].map((m) => `${file}: ${m[1]}`));
    expect(outside).toEqual([]);
  });

  test('no source builds an HttpError ad hoc: each error is a named class', () => {
    const adHoc = sources.filter(({ text }) => /new\s+HttpError\s*\(/.test(text)).map(({ file }) => file);
    expect(adHoc).toEqual([]);
  });
});

describe('the configuration codes', () => {
  test('docs/ERRORS.md lists every code of CONFIG_ERROR_CODES, each with when and what to change, and no other code', () => {
    const rows = tableUnder('Configuration errors');
    expect(rows.filter((cells) => cells.length !== 3 || cells.some((cell) => cell === ''))).toEqual([]);
    expect(sorted(rows.map(([code]) => unquoted(code!)))).toEqual(sorted(Object.keys(CONFIG_ERROR_CODES)));
  });

  test('each configuration code has its anchor in docs/ERRORS.md, and its error ends with that anchor, as help', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'ERRORS.md'), 'utf8');
    const anchors = [...doc.matchAll(/<a id="(err_toolgate_[a-z_]+)"><\/a>`([A-Z_]+)`/g)].map((m) => [m[1], m[2]!.toLowerCase()]);
    expect(anchors.filter(([anchor, code]) => anchor !== code)).toEqual([]);
    expect(sorted(anchors.map(([anchor]) => anchor!))).toEqual(sorted(Object.keys(CONFIG_ERROR_CODES).map((c) => c.toLowerCase())));
    for (const code of Object.keys(CONFIG_ERROR_CODES) as (keyof typeof CONFIG_ERROR_CODES)[]) {
      const err = new ToolgateConfigError(code, 'Something is off: change it.');
      expect(err.help).toBe(`docs/ERRORS.md#${code.toLowerCase()}`);
      expect(err.message.endsWith(`(${code}: docs/ERRORS.md#${code.toLowerCase()})`)).toBe(true);
    }
  });

  test('every ERR_TOOLGATE_ code the source names is in CONFIG_ERROR_CODES, and CONFIG_ERROR_CODES holds none it never names', () => {
    const named = sources
      .filter(({ file }) => file !== REGISTRY)
      .flatMap(({ text }) => [...text.matchAll(/ERR_TOOLGATE_[A-Z_]+/g)].map((m) => m[0]));
    expect(sorted(named)).toEqual(sorted(Object.keys(CONFIG_ERROR_CODES)));
  });
});
