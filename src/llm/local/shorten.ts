// Shortening text for titles and summaries: cut at a word boundary, the cut marked with an ellipsis.

export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${trimTrailing(space > max / 2 ? cut.slice(0, space) : cut, (c) => /[\s,;:]/.test(c))}…`;
}

/**
 * The text without the characters `drop` accepts at its end: a scan from the end, where a regular
 * expression such as `/[.!]+$/` retries from every run of them and grows with the square of the text.
 */
export function trimTrailing(text: string, drop: (char: string) => boolean): string {
  let end = text.length;
  while (end > 0 && drop(text[end - 1]!)) end--;
  return text.slice(0, end);
}
