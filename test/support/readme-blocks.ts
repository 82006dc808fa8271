// The README's shell blocks as a reader meets them: each with the prose before it (where the README
// says what a block needs first), split into the commands a shell runs one after another, each with
// the comment lines above it; and its JSON blocks, with the sentence that introduces each.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface ShellCommand {
  /** The command as written, continuation lines and multi-line quotes included. */
  text: string;
  /** The comment lines right above it (and one at its end), which say what it answers. */
  comment: string;
}

export interface ShellBlock {
  /** The heading of the section it is in (`## ...` or `### ...`). */
  heading: string;
  /** The README's text between the previous fenced block and this one. */
  before: string;
  commands: ShellCommand[];
  /** The block as written. */
  source: string;
}

export interface JsonBlock {
  before: string;
  value: unknown;
}

const README = path.resolve(__dirname, '..', '..', 'README.md');
const FENCE = /```(\w*)\n([\s\S]*?)```/g;

export function readmeBlocks(text = readFileSync(README, 'utf8')): { sh: ShellBlock[]; json: JsonBlock[] } {
  const sh: ShellBlock[] = [];
  const json: JsonBlock[] = [];
  let last = 0;
  for (const m of text.matchAll(FENCE)) {
    const before = text.slice(last, m.index);
    last = m.index + m[0].length;
    const heading = [...text.slice(0, m.index).matchAll(/^#{2,3} (.+)$/gm)].at(-1)?.[1] ?? '';
    if (m[1] === 'sh') sh.push({ heading, before, source: m[2]!, commands: splitCommands(m[2]!) });
    if (m[1] === 'json') json.push({ before, value: JSON.parse(m[2]!) });
  }
  return { sh, json };
}

/**
 * Splits shell text where bash would end a command: a newline outside quotes, `$(...)` and a
 * backslash continuation. A `#` that starts a word outside quotes is a comment to the line's end,
 * and its quotes mean nothing (the README's comments hold apostrophes).
 */
export function splitCommands(source: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let comment: string[] = [];
  let current = '';
  let quote: "'" | '"' | null = null;
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quote === "'") {
      current += c;
      if (c === "'") quote = null;
      continue;
    }
    if (c === '\\') {
      current += c + (source[i + 1] ?? '');
      i++;
      continue;
    }
    if (quote === '"') {
      current += c;
      if (c === '"') quote = null;
      continue;
    }
    if (c === '#' && (current === '' || /\s$/.test(current))) {
      const end = source.indexOf('\n', i);
      // Above a command it says what the next one answers; after one, what that one answers.
      comment.push(source.slice(i + 1, end === -1 ? undefined : end).trim());
      i = (end === -1 ? source.length : end) - 1;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    if (c === '(' && current.endsWith('$')) depth++;
    if (c === ')' && depth > 0) depth--;
    if (c === '\n' && depth === 0) {
      if (current.trim() !== '') {
        commands.push({ text: current.trim(), comment: comment.join(' ') });
        comment = [];
      }
      current = '';
      continue;
    }
    current += c;
  }
  if (quote !== null || depth !== 0) throw new Error(`a README shell block ends inside a quote or $(...):\n${source}`);
  if (current.trim() !== '') commands.push({ text: current.trim(), comment: comment.join(' ') });
  return commands;
}
