// Reads a search query in web-search syntax ("quoted phrases", -excluded words, or) into the texts
// the full-text search hands to websearch_to_tsquery. A question in plain words must find chunks
// holding only some of its words, so the terms are OR-ed and ranking rewards chunks holding more.

export interface SearchTerms {
  /** Words and "phrases" a chunk should hold; every one counts toward its score. */
  include: string[];
  /** Words and "phrases" no returned chunk may hold. */
  exclude: string[];
}

// A quoted phrase (an unclosed quote runs to the end, as in websearch_to_tsquery), or a bare token.
const TOKEN = /(^|\s)(-?)"([^"]*)(?:"|$)|([^\s"]+)/g;

export function parseSearchQuery(query: string): SearchTerms {
  const terms: SearchTerms = { include: [], exclude: [] };
  for (const m of query.matchAll(TOKEN)) {
    const phrase = m[3];
    if (phrase !== undefined) {
      if (phrase.trim()) (m[2] ? terms.exclude : terms.include).push(phrase.trim());
      continue;
    }
    const word = m[4]!;
    if (/^or$/i.test(word)) continue;
    const excluded = word.startsWith('-') && word.length > 1;
    const bare = word.replace(/^-+/, '');
    if (bare) (excluded ? terms.exclude : terms.include).push(bare);
  }
  return terms;
}

/** websearch_to_tsquery input matching any one of the terms. */
export function anyOf(terms: readonly string[]): string {
  return terms.map((t) => (/\s/.test(t) ? `"${t}"` : t)).join(' or ');
}
