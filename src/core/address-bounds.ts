// The bounds an address is held to before the RFC 5322 parser reads it (SEMANTICS §12b): the parser
// backtracks, so its cost grows with the square of comment nesting and by tens of µs per comment or
// token of hostile text. One linear scan per value decides; a plain address (plain-routing-key.ts)
// never reaches the parser, and a list of plain addresses is read piece by piece without it.
import { INPUT_BOUNDS, type InputBound } from './input-bounds';
import { plainRoutingKey } from './plain-routing-key';

const OPEN = 0x28;
const CLOSE = 0x29;
const AT = 0x40;

export type AddressBound = Extract<InputBound, `address_${string}`>;

/** The per-value bound an address value is past (comment nesting, comment count), or null. */
export function addressValueBreach(value: string): AddressBound | null {
  // Every parenthesis counts, quoted or escaped: the parser may read a quote as unclosed and the
  // parenthesis as a comment after all, so the count must not depend on what it makes of quotes.
  let depth = 0;
  let comments = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === OPEN) {
      comments++;
      if (++depth > INPUT_BOUNDS.address_comment_nesting) return 'address_comment_nesting';
    } else if (c === CLOSE && depth > 0) depth--;
  }
  return comments > INPUT_BOUNDS.address_comments ? 'address_comments' : null;
}

/**
 * The routing keys of a value whose every comma-separated piece is a plain address with a key
 * (`a@b.com, Jane <c@d.com>`): what the list parser would give, without it. Null otherwise.
 */
export function plainListKeys(value: string): string[] | null {
  const keys: string[] = [];
  for (const piece of value.split(',')) {
    const key = plainRoutingKey(spacesTrimmed(piece));
    if (typeof key !== 'string') return null;
    keys.push(key);
  }
  return keys;
}

/** The piece without the spaces and tabs around it (String.trim also drops characters the parser may not read as space). */
function spacesTrimmed(piece: string): string {
  let start = 0;
  let end = piece.length;
  while (start < end && (piece[start] === ' ' || piece[start] === '\t')) start++;
  while (end > start && (piece[end - 1] === ' ' || piece[end - 1] === '\t')) end--;
  return piece.slice(start, end);
}

/** Whether the RFC 5322 parser reads the value: it is not one plain address with a key, nor a list of them. */
export function needsParser(value: string): boolean {
  return typeof plainRoutingKey(value) !== 'string' && plainListKeys(value) === null;
}

/** How many addresses a value names, counted by their `@` (a value with none counts one). */
export function addressCount(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) === AT) n++;
  return Math.max(n, 1);
}

/** A message's address fields, each a value or a list of them (anything else, as a schema may yet refuse it, is skipped). */
export type AddressFields = Record<string, unknown>;

export interface AddressBreach {
  bound: AddressBound;
  loc: (string | number)[];
  detail: string;
}

/**
 * The first bound a message's addresses are past, with where: each value's own bounds, then the
 * message's count of addresses and its text that only the parser reads. Null when within them all.
 */
export function addressFieldsBreach(fields: AddressFields): AddressBreach | null {
  let count = 0;
  let parsed = 0;
  for (const [field, values] of Object.entries(fields)) {
    const list: unknown[] = typeof values === 'string' ? [values] : Array.isArray(values) ? values : [];
    for (let i = 0; i < list.length; i++) {
      const value = list[i];
      if (typeof value !== 'string') continue;
      const loc = typeof values === 'string' ? [field] : [field, i];
      const breach = addressValueBreach(value);
      if (breach !== null) return { bound: breach, loc, detail: valueDetail(breach) };
      count += addressCount(value);
      if (count > INPUT_BOUNDS.address_count) return { bound: 'address_count', loc, detail: COUNT_DETAIL };
      if (needsParser(value)) parsed += value.length;
      if (parsed > INPUT_BOUNDS.address_text_length) return { bound: 'address_text_length', loc, detail: TEXT_DETAIL };
    }
  }
  return null;
}

function valueDetail(bound: AddressBound): string {
  return bound === 'address_comment_nesting'
    ? `This address nests comments (parentheses) more than ${INPUT_BOUNDS.address_comment_nesting} deep, which no mail client writes: send the address without them; nothing was run.`
    : `This address holds more than ${INPUT_BOUNDS.address_comments} comments (parentheses), which no mail client writes: send the address without them; nothing was run.`;
}

const COUNT_DETAIL = `This message names more than ${INPUT_BOUNDS.address_count} addresses in from, to, cc and reply_to (counted by their @), more than mail servers deliver to: send at most ${INPUT_BOUNDS.address_count}; nothing was run.`;

const TEXT_DETAIL = `This message's addresses hold more than ${INPUT_BOUNDS.address_text_length} characters that are not plain addresses (jane@acme.com, Jane Doe <jane@acme.com>, "Doe, Jane" <jane@acme.com>): send each address as its own entry of to or cc, in one of those forms; nothing was run.`;
