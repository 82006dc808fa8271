// The characters no routing key may hold (SEMANTICS §3), and that a page shows escaped: they are
// invisible, or reorder, join or space the text around them, so a key holding one reads as another.

// Format characters (Cf: the bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
// U+2066–U+2069, the zero-width characters, U+FEFF, the soft hyphen, tag characters), line and
// paragraph separators, every space but U+0020 (U+00A0, U+3000...), and the other code points
// Unicode says to display as nothing (variation selectors, Hangul fillers, U+034F).
const INVISIBLE = String.raw`[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|[^\P{Zs} ]`;

export const INVISIBLE_CHARACTER = new RegExp(INVISIBLE, 'u');

/** The text cut at its invisible characters: the visible runs, and each invisible character alone. */
export function splitInvisible(text: string): { text: string; invisible: boolean }[] {
  const parts: { text: string; invisible: boolean }[] = [];
  let from = 0;
  for (const match of text.matchAll(new RegExp(INVISIBLE, 'gu'))) {
    if (match.index > from) parts.push({ text: text.slice(from, match.index), invisible: false });
    parts.push({ text: match[0], invisible: true });
    from = match.index + match[0].length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), invisible: false });
  return parts;
}

/** `U+202E`: how a page names an invisible character. */
export function codePointName(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
