// The bounds request input is held to before any parser reads it (SEMANTICS §12b), each declared
// once: a value past one is refused (422 input_too_complex naming it) and never parsed, so no
// request holds the event loop for long. Each number is one no real client reaches, with the
// parser's measured cost under it kept far below 50 ms for a whole request.

export const INPUT_BOUNDS = {
  /**
   * The deepest a JSON body may nest arrays and objects: no route's schema reads deeper, and a
   * walk of it (canonical JSON, the storable-text check) stays short.
   */
  json_depth: 64,
  /**
   * The deepest an address may nest comments, `((...))`: the RFC 5322 parser's cost grows with the
   * square of it. Counted over every parenthesis, quoted or not, so the bound holds whatever the
   * parser makes of the quotes.
   */
  address_comment_nesting: 3,
  /** The most comments (opening parentheses) one address value holds: each costs the parser tens of µs. */
  address_comments: 16,
  /** The most addresses one message names in From, To, Cc and Reply-To, counted by their `@`: mail servers stop at 500 recipients. */
  address_count: 500,
  /**
   * The most characters of address text per message that only the full RFC 5322 parser reads: the
   * values that are not a plain address (`jane@acme.com`, `Jane Doe <jane@acme.com>`, `Jöhn Dœ
   * <j@acme.com>`, `"Doe, Jane" <jane@acme.com>`, and comma lists of them), such as a comment or
   * an escaped quote. The parser costs
   * up to 20 µs a character on hostile text.
   */
  address_text_length: 1_000,
  /** The most Message-IDs a References header (or list) names: a thread is found by its newest. */
  references_count: 500,
} as const;

export type InputBound = keyof typeof INPUT_BOUNDS;

/** A value past a bound: which, where in the request, and the sentence saying what to change. */
export interface BoundBreach {
  bound: InputBound;
  detail: string;
}
