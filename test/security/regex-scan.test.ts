// Every regular expression in the code, checked for super-linear backtracking (SEMANTICS §12b) by a
// ReDoS checker (recheck), so that no pattern run on request input grows with the square of it. A
// new pattern that is not linear fails here, before any hostile input finds it. (Patterns built with
// new RegExp take a literal's source, which is checked here as that literal.)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkSync } from 'recheck';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/** Each regular expression literal of the code toolgate ships, with where it stands. */
function regexLiterals(): { at: string; source: string; flags: string }[] {
  const files = execFileSync('git', ['ls-files', 'src', 'middleware', 'routes', 'models'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /\.tsx?$/.test(file));
  const found: { at: string; source: string; flags: string }[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(source);
        const slash = text.lastIndexOf('/');
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push({ at: `${file}:${line}`, source: text.slice(1, slash), flags: text.slice(slash + 1) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

test('when the code holds a regular expression, then the ReDoS checker finds it linear: none backtracks super-linearly', () => {
  const literals = regexLiterals();
  expect(literals.length).toBeGreaterThan(100);
  const unsafe = literals
    .map((r) => ({ ...r, verdict: checkSync(r.source, r.flags) }))
    .filter((r) => r.verdict.status !== 'safe')
    .map((r) => `${r.at} /${r.source}/${r.flags}: ${r.verdict.status}`);
  expect(unsafe).toEqual([]);
}, 120_000);
