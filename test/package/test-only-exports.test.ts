// An export that only tests import is either needed by the code's own declarations, a bound the
// tests read instead of repeating its number, or a pure function tested on its own; each is listed
// here with which. A new one, or one listed that code has started to use, fails this test, so the
// list says what is exported for tests and nothing creeps in unseen.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../..');

type Why =
  /** A type an exported function takes or returns: the package's declarations need its name. */
  | 'declaration'
  /** A bound or a name the tests read, so they never repeat its value. */
  | 'bound'
  /** A pure function of the core or a parser, tested on its own as well as through its callers. */
  | 'unit';

const EXPORTED_FOR_TESTS: Record<string, Why> = {
  'src/documents/ask.ts AskResult': 'declaration',
  'src/documents/ask.ts AnswerFn': 'declaration',
  'src/documents/document-store.ts DocumentView': 'declaration',
  'routes/responses.ts searchResultResponse': 'declaration',
  'src/toolgate-options.ts TOOLGATE_OPTION_NAMES': 'bound',
  // The registry that docs/ERRORS.md and the codes the source names are held to (error-registry.test.ts).
  'src/errors.ts CONFIG_ERROR_CODES': 'bound',
  // Its test must cross it, and both sides of it give the same report: a number written there would stop crossing it unseen.
  'src/legacy/migrate-enabled-tools.ts MAX_PLAIN_CLASSES': 'bound',
  'src/llm/email-analysis.ts isoDateSchema': 'unit',
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
