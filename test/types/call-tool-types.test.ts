// run.callTool()'s types, checked by the compiler itself: call-tool.typed.ts must compile, and every
// line of call-tool.misuse.ts marked @ts-expect-error must be an error, found again with the
// directives taken out (so a directive that stopped meaning anything fails here, not silently).
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const TYPED = path.join(__dirname, 'call-tool.typed.ts');
const MISUSE = path.join(__dirname, 'call-tool.misuse.ts');
// Beside the file, so that its imports resolve as they do from the file itself.
const STRIPPED = path.join(__dirname, 'call-tool.misuse.stripped.ts');
const DIRECTIVE = /\/\/ @ts-expect-error\b.*$/;

function compilerOptions(): ts.CompilerOptions {
  const file = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT);
  return { ...parsed.options, noEmit: true, strict: true };
}

let diagnostics: Map<string, readonly ts.Diagnostic[]>;
let marked: number[];

beforeAll(() => {
  const misuse = ts.sys.readFile(MISUSE)!;
  const lines = misuse.split('\n');
  // 1-based numbers of the lines under each directive.
  marked = lines.flatMap((line, i) => (DIRECTIVE.test(line) ? [i + 2] : []));
  const stripped = lines.map((line) => line.replace(DIRECTIVE, '// (directive taken out)')).join('\n');
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, fresh) =>
    path.resolve(fileName) === STRIPPED ? ts.createSourceFile(fileName, stripped, language) : read(fileName, language, onError, fresh);
  host.fileExists = (
    (exists) => (fileName: string) =>
      path.resolve(fileName) === STRIPPED || exists(fileName)
  )(host.fileExists.bind(host));
  const program = ts.createProgram([TYPED, MISUSE, STRIPPED], options, host);
  diagnostics = new Map([TYPED, MISUSE, STRIPPED].map((f) => [f, ts.getPreEmitDiagnostics(program, program.getSourceFile(f))]));
}, 120_000);

const shown = (list: readonly ts.Diagnostic[]) =>
  list.map((d) => {
    const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${path.basename(d.file?.fileName ?? '')}:${at} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });

describe('when a host calls a tool by its defineTool() value', () => {
  test('then the input is typed by its schema and the output by what it returns, and the by-id form still compiles', () => {
    expect(shown(diagnostics.get(TYPED)!)).toEqual([]);
  });

  test('then every misuse marked in call-tool.misuse.ts is refused by the compiler, each where it is marked', () => {
    expect(marked.length).toBeGreaterThanOrEqual(8);
    // With the directives: each one met an error (an unused one is itself an error).
    expect(shown(diagnostics.get(MISUSE)!)).toEqual([]);
    // Without them: errors on exactly the marked lines, and nowhere else.
    const lines = diagnostics.get(STRIPPED)!.map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1);
    expect([...new Set(lines)].sort((a, b) => a - b)).toEqual(marked);
  });

  test('then reading the output of a call by id is TS18046, as the issue met it: the output is unknown', () => {
    const last = marked.at(-1)!;
    expect(
      diagnostics
        .get(STRIPPED)!
        .filter((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1 === last)
        .map((d) => d.code),
    ).toEqual([18046]);
  });
});
