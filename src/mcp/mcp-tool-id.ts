// How an MCP server's tool is spelled as a toolgate tool id (docs/DECISIONS.md, "MCP tool ids"):
// `<server>__<tool>`, the tool's own name in snake_case: `get-sum` is `everything__get_sum`,
// `getTinyImage` is `everything__get_tiny_image`. The name itself is kept for tools/call. Two names
// that spell one id are told apart by which was pinned first (pin-listing.ts), so an id never
// changes its tool once pinned.
import { MAX_TOOL_ID } from '../core/types';

/** The tool names taken from a server: others are skipped, and reported. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_-]{1,48}$/;

export type ToolIdSpelling = { id: string } | { skipped: string };

export function mcpToolId(server: string, name: string): ToolIdSpelling {
  if (!MCP_TOOL_NAME.test(name)) return { skipped: 'its name is not 1 to 48 letters, digits, "_" or "-"' };
  const part = snakeCase(name);
  if (part === '') return { skipped: 'its name has no letter or digit' };
  const id = `${server}__${part}`;
  if (id.length > MAX_TOOL_ID) return { skipped: `its id ${id} would be longer than ${MAX_TOOL_ID} characters` };
  return { id };
}

/**
 * Lowercase words joined by single underscores: a word starts at each "-" or "_", at an uppercase
 * letter after a lowercase one or a digit, and at the last capital of a run followed by a
 * lowercase letter (`HTTPServer` is `http_server`). A scan, not a pattern: one pass, no backtracking.
 */
function snakeCase(name: string): string {
  const words: string[] = [];
  let word = '';
  for (let i = 0; i < name.length; i += 1) {
    const c = name[i]!;
    if (c === '-' || c === '_') {
      if (word) words.push(word);
      word = '';
      continue;
    }
    const prev = name[i - 1];
    const next = name[i + 1];
    const startsWord =
      isUpper(c) && prev !== undefined && (isLower(prev) || isDigit(prev) || (isUpper(prev) && next !== undefined && isLower(next)));
    if (startsWord && word) {
      words.push(word);
      word = '';
    }
    word += c.toLowerCase();
  }
  if (word) words.push(word);
  return words.join('_');
}

const isUpper = (c: string) => c >= 'A' && c <= 'Z';
const isLower = (c: string) => c >= 'a' && c <= 'z';
const isDigit = (c: string) => c >= '0' && c <= '9';
