// Parses one Authentication-Results header value (RFC 8601 §2.2, without the field name) into its
// authserv-id, version and results, or says why it cannot.
//
// Written here rather than taken from npm: we found no package that parses this header. mailauth
// (the maintained Node mail-authentication library) writes it and exports no reader; the reader
// inside it (for ARC) skips nested comments and keys results by method, so of
// `dmarc=fail; dmarc=pass` only the pass would survive.
// This reader follows the ABNF where a result could hinge on it (CFWS with nested comments and
// quoted-pairs, quoted strings, keywords, "none", versions) and is lenient only where nothing is
// decided: property names may hold "_" (Fastmail's `policy.is_org`), unquoted values may be any
// printable run but "=" (base64 `header.b`), and bare `key=value` items (`x-bits=2048`) are kept
// under their bare key. A repeated property or reason in one result is an error, never a choice.
import { z } from 'zod';

/** Longer values are refused: a real header is a few hundred characters. */
export const MAX_AUTHENTICATION_RESULTS_LENGTH = 16_384;

export const authResultSchema = z.object({
  /** Lowercase: `dmarc`, `spf`, `dkim`, ... */
  method: z.string(),
  /** The `/1` of `dkim/1=pass`; absent means 1 (RFC 8601 §2.2). */
  method_version: z.number().int().nonnegative().optional(),
  /** Lowercase: `pass`, `fail`, `none`, ... */
  result: z.string(),
  reason: z.string().optional(),
  /** `ptype.property` in lowercase (bare extension keys as given, lowercased) → the value, unquoted. */
  properties: z.record(z.string(), z.string()),
});
export type AuthResult = z.infer<typeof authResultSchema>;

export interface AuthenticationResults {
  /** As written (unquoted), never empty; compare it with sameAuthservId(). */
  authserv_id: string;
  /** A whole number of 0 or more; absent when the header gives none. */
  version?: number;
  /** Empty for `; none`. */
  results: AuthResult[];
}

export type AuthenticationResultsParse =
  | { ok: true; header: AuthenticationResults }
  | { ok: false; reason: string; /** Set when the failure came after the authserv-id was read. */ authserv_id?: string };

// Folding (RFC 5322 §2.2.3) is a line break before whitespace; LF alone is accepted as well,
// since clients often hand over values with their line endings normalized.
const FOLD = /\r?\n(?=[ \t])/g;
// Any control character left once folds are removed; TAB is whitespace.
const CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F]/u;
// RFC 2045 token: printable ASCII except SPACE and tspecials.
const TOKEN_CHAR = /[!#$%&'*+\-.0-9A-Z^_`a-z{|}~]/;
const KEYWORD_START = /[A-Za-z0-9]/;
const KEYWORD_CHAR = /[A-Za-z0-9-]/;
const PROPERTY_CHAR = /[A-Za-z0-9_-]/;
const DIGIT = /[0-9]/;
// A property value written without quotes: anything up to whitespace, a comment or the next result.
// "=" ends it too (RFC 8601 never allows one there), so that `header.x= header.from=evil.com` is
// an error rather than an empty header.x swallowing the header.from that follows it.
const PVALUE_STOP = /[ \t();"\\=]/;
const MAX_VERSION_DIGITS = 6;
// What a real header never passes: a server stamps one result per method and signature, a few
// properties each, and a comment or two. Past them, the header cannot be read (so it never vouches).
const MAX_RESULTS = 32;
const MAX_PROPERTIES = 32;
const MAX_COMMENTS = 256;

// The runs the reader takes, as sticky expressions read from a position: native scans, so a header
// of the largest size allowed is read in a few milliseconds (a test of one character at a time
// took over 100 ms for 64 of them).
const RUNS = new Map<RegExp, RegExp>(
  [TOKEN_CHAR, KEYWORD_CHAR, PROPERTY_CHAR, DIGIT].map((chars) => [chars, new RegExp(`${chars.source}*`, 'y')]),
);
const UNTIL = new Map<RegExp, RegExp>([[PVALUE_STOP, new RegExp(`[^${PVALUE_STOP.source.slice(1, -1)}]*`, 'y')]]);
// A whole quoted string (its two alternatives never overlap, so it is read in one linear pass), and
// what is left of one that never closes: its last character says whether a backslash was left over.
const QUOTED = /"((?:[^"\\]|\\.)*)"/sy;
const UNCLOSED = /^"(?:[^"\\]|\\.)*(\\?)$/s;
const QUOTED_PAIR = /\\(.)/gs;
const COMMENT_MARK = /[()\\]/g;

class ParseFailure extends Error {}

const ASCII_UPPER = /[A-Z]/;
const ASCII_UPPERS = /[A-Z]/g;
const BEYOND_ASCII = /[^\u0000-\u007F]/;

/** ASCII-only case folding: Unicode folding would let `K` (KELVIN SIGN) pass for `k`. */
export function asciiLower(text: string): string {
  // Most of what a header holds is lower case already; toLowerCase() would change letters beyond
  // ASCII too (İ, K), so it serves only text that has none.
  if (!ASCII_UPPER.test(text)) return text;
  return BEYOND_ASCII.test(text) ? text.replace(ASCII_UPPERS, (c) => c.toLowerCase()) : text.toLowerCase();
}

/** Two authserv-ids name the same server: equal up to ASCII case, as domain names are (RFC 4343). */
export function sameAuthservId(a: string, b: string): boolean {
  return a.length > 0 && asciiLower(a) === asciiLower(b);
}

export function parseAuthenticationResults(value: unknown): AuthenticationResultsParse {
  if (typeof value !== 'string') return { ok: false, reason: 'the header value is not a string' };
  if (value.length > MAX_AUTHENTICATION_RESULTS_LENGTH) {
    return { ok: false, reason: `the header value is over ${MAX_AUTHENTICATION_RESULTS_LENGTH} characters` };
  }
  const reader = new Reader(value.replace(FOLD, ''));
  try {
    if (CONTROL.test(reader.text)) reader.fail('it contains a control character or a line break that is not folding');
    return { ok: true, header: reader.payload() };
  } catch (err) {
    if (!(err instanceof ParseFailure)) throw err;
    return reader.authservId === undefined
      ? { ok: false, reason: err.message }
      : { ok: false, reason: err.message, authserv_id: reader.authservId };
  }
}

class Reader {
  pos = 0;
  /** How many properties the result being read holds so far. */
  private properties = 0;
  authservId: string | undefined;
  private comments = 0;

  constructor(readonly text: string) {}

  fail(why: string): never {
    throw new ParseFailure(why);
  }

  payload(): AuthenticationResults {
    this.skipCFWS();
    const id = this.peek() === '"' ? this.quoted() : this.run(TOKEN_CHAR);
    if (id === '') this.fail('it has no authserv-id');
    this.authservId = id;
    this.skipCFWS();
    const version = DIGIT.test(this.peek()) ? this.version('the header version') : undefined;
    if (this.atEnd()) this.fail(`the authserv-id "${id}" is followed by no result (not even "none")`);

    const results: AuthResult[] = [];
    let none = false;
    while (!this.atEnd()) {
      this.expect(';', 'a ";" before the next result');
      this.skipCFWS();
      // One trailing ";" is tolerated: several servers end the list with one.
      if (this.atEnd() && (none || results.length > 0)) break;
      const method = this.keyword(KEYWORD_CHAR, 'a method name');
      this.skipCFWS();
      if (asciiLower(method) === 'none' && (this.atEnd() || this.peek() === ';')) {
        if (none || results.length > 0) this.fail('"none" must be the only result');
        none = true;
        continue;
      }
      if (none) this.fail('"none" must be the only result');
      if (results.length === MAX_RESULTS) this.fail(`it holds more than ${MAX_RESULTS} results`);
      results.push(this.resinfo(method));
    }
    if (!none && results.length === 0) this.fail('it has no result');
    return version === undefined ? { authserv_id: id, results } : { authserv_id: id, version, results };
  }

  private resinfo(method: string): AuthResult {
    let methodVersion: number | undefined;
    if (this.peek() === '/') {
      this.pos++;
      this.skipCFWS();
      methodVersion = this.version(`the version of ${method}`);
    }
    this.expect('=', `"=" and a result after the method ${method}`);
    this.skipCFWS();
    const result = this.keyword(KEYWORD_CHAR, `the result of ${method}`);
    this.properties = 0;
    const info: AuthResult = {
      method: asciiLower(method),
      result: asciiLower(result),
      properties: Object.create(null) as Record<string, string>,
    };
    if (methodVersion !== undefined) info.method_version = methodVersion;

    for (;;) {
      this.skipCFWS();
      if (this.atEnd() || this.peek() === ';') return info;
      const key = asciiLower(this.keyword(PROPERTY_CHAR, `a property of ${method}`));
      this.skipCFWS();
      if (this.peek() === '.') {
        this.pos++;
        this.skipCFWS();
        const name = `${key}.${asciiLower(this.keyword(PROPERTY_CHAR, `the property after "${key}."`))}`;
        this.skipCFWS();
        this.expect('=', `"=" after ${name}`);
        this.setProperty(info, name, this.pvalue());
      } else if (this.peek() === '=') {
        this.pos++;
        if (key === 'reason') {
          if (info.reason !== undefined) this.fail(`${method} has two reasons`);
          info.reason = this.pvalue();
        } else {
          this.setProperty(info, key, this.pvalue());
        }
      } else {
        this.fail(`"${key}" in ${method} is followed by neither "." nor "="`);
      }
    }
  }

  private setProperty(info: AuthResult, name: string, value: string): void {
    if (Object.hasOwn(info.properties, name)) this.fail(`${info.method} gives ${name} twice`);
    if (this.properties === MAX_PROPERTIES) this.fail(`${info.method} holds more than ${MAX_PROPERTIES} properties`);
    info.properties[name] = value;
    this.properties++;
  }

  /** A property value: a quoted string (maybe as a quoted local part before "@domain"), or a run. */
  private pvalue(): string {
    this.skipCFWS();
    if (this.peek() === '"') {
      const quoted = this.quoted();
      if (this.peek() !== '@') return quoted;
      this.pos++;
      return `${quoted}@${this.until(PVALUE_STOP)}`;
    }
    return this.until(PVALUE_STOP);
  }

  private version(what: string): number {
    const digits = this.run(DIGIT);
    if (digits === '' || digits.length > MAX_VERSION_DIGITS) this.fail(`${what} is not a number`);
    this.skipCFWS();
    return Number(digits);
  }

  private keyword(chars: RegExp, what: string): string {
    if (!KEYWORD_START.test(this.peek())) this.fail(`expected ${what} at position ${this.pos}, found ${this.describeHere()}`);
    return this.run(chars);
  }

  private expect(char: string, what: string): void {
    if (this.peek() !== char) this.fail(`expected ${what} at position ${this.pos}, found ${this.describeHere()}`);
    this.pos++;
  }

  /** Whitespace and comments; a comment nests and may escape any character (RFC 5322 §3.2.2). */
  private skipCFWS(): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t') this.pos++;
      else if (c === '(') this.skipComment();
      else return;
    }
  }

  private skipComment(): void {
    const start = this.pos;
    if (++this.comments > MAX_COMMENTS) this.fail(`it holds more than ${MAX_COMMENTS} comments`);
    let depth = 0;
    for (;;) {
      // Straight to the next parenthesis or escape: nothing else in a comment matters.
      COMMENT_MARK.lastIndex = this.pos;
      const mark = COMMENT_MARK.exec(this.text);
      if (mark === null) this.fail(`the comment opened at position ${start} is never closed`);
      this.pos = mark.index;
      const c = mark[0];
      if (c === '\\') {
        if (this.pos + 1 >= this.text.length) this.fail(`the comment opened at position ${start} ends in a lone "\\"`);
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (c === '(') depth++;
      else if (--depth === 0) return;
    }
  }

  /** A quoted string's content, quoted-pairs unescaped; inside it "(" and ")" are plain text. */
  private quoted(): string {
    QUOTED.lastIndex = this.pos;
    const whole = QUOTED.exec(this.text);
    if (whole === null) {
      // It ran to the end: with a backslash left over, or with no closing quote.
      const lone = UNCLOSED.exec(this.text.slice(this.pos))?.[1] === '\\';
      this.fail(`the quoted string opened at position ${this.pos} ${lone ? 'ends in a lone "\\"' : 'is never closed'}`);
    }
    this.pos += whole[0].length;
    return whole[1]!.replace(QUOTED_PAIR, '$1');
  }

  private run(chars: RegExp): string {
    return this.sticky(RUNS.get(chars)!);
  }

  private until(stop: RegExp): string {
    return this.sticky(UNTIL.get(stop)!);
  }

  private sticky(expression: RegExp): string {
    expression.lastIndex = this.pos;
    const taken = expression.exec(this.text)![0];
    this.pos += taken.length;
    return taken;
  }

  private peek(): string {
    return this.text[this.pos] ?? '';
  }

  private atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  private describeHere(): string {
    return this.atEnd() ? 'the end' : JSON.stringify(this.text.slice(this.pos, this.pos + 12));
  }
}
