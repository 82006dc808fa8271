// No export exists for tests alone: a test goes through what the code itself uses, and states a
// contract's number rather than importing it. The few exceptions are lists a test must hold a
// second list to (the README's, docs/ERRORS.md's), or a bound whose two sides behave alike; each is
// listed here with why. A new one, or one listed that code has started to use, fails this test.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../..');

/** A list or a bound the tests read, where writing its value in the test would stop the test holding it. */
type Why = 'bound';

const EXPORTED_FOR_TESTS: Record<string, Why> = {
  // The schema's option names, which the README's options table is held to (options.test.ts).
  'src/toolgate-options.ts TOOLGATE_OPTION_NAMES': 'bound',
  // The registry that docs/ERRORS.md and the codes the source names are held to (error-registry.test.ts).
  'src/errors.ts CONFIG_ERROR_CODES': 'bound',
  // Its test must cross it, and both sides of it give the same report: a number written there would stop crossing it unseen.
  'src/legacy/migrate-enabled-tools.ts MAX_PLAIN_CLASSES': 'bound',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.posix.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [rel] : [];
  });
}

const CODE = ['src', 'middleware', 'routes', 'models'].flatMap(sourceFiles);
const USERS = [...CODE, ...['migrations', 'seeders', 'bench', 'examples'].flatMap(sourceFiles)];
const TESTS = sourceFiles('test');
const EXPORT =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:const|let|function\*?|class|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm;
const IMPORT = /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(\.[^']+)'/g;
const NAMESPACE = /import\s+\*\s+as\s+([\w$]+)\s+from\s+'(\.[^']+)'/g;

/** Every import of a module of this tree, by name: `file name` → the files that import it. */
function importsBy(files: readonly string[]): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const use = (target: string, name: string, file: string) => {
    const key = `${target} ${name}`;
    (found.get(key) ?? found.set(key, new Set()).get(key)!).add(file);
  };
  const moduleOf = (file: string, spec: string) => {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    return [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((c) => CODE.includes(c));
  };
  for (const file of files) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const target = moduleOf(file, m[2]!);
      if (!target) continue;
      for (const part of m[1]!.split(',')) {
        const name = part
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)[0]!
          .trim();
        if (name) use(target, name, file);
      }
    }
    // `import * as r from`: every `r.name` the file reads.
    for (const m of text.matchAll(NAMESPACE)) {
      const target = moduleOf(file, m[2]!);
      if (!target) continue;
      for (const read of text.matchAll(new RegExp(`\\b${m[1]}\\.([\\w$]+)`, 'g'))) use(target, read[1]!, file);
    }
  }
  return found;
}

test('when an export is imported by tests and by no code, then it is listed here with why, and every listed one still is', () => {
  const byCode = importsBy(USERS);
  const byTests = importsBy(TESTS);
  const testOnly = CODE.filter((file) => file !== 'src/index.ts').flatMap((file) =>
    [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(EXPORT)]
      .map((m) => `${file} ${m[1]}`)
      .filter((key) => byTests.has(key) && !byCode.has(key)),
  );
  expect(testOnly.filter((key) => !(key in EXPORTED_FOR_TESTS))).toEqual([]);
  expect(Object.keys(EXPORTED_FOR_TESTS).filter((key) => !testOnly.includes(key))).toEqual([]);
});
