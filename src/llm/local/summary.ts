// An extractive summary: the message's lead sentences, verbatim, up to about 240 characters.
import { shorten } from './shorten';

export const SUMMARY_LENGTH = 240;

// Openers that carry no content ("I hope you're well.") are passed over.
const PLEASANTRY = /^(i hope|hope)\b.*\b(well|good|great|fine)\b|^(how are you|happy (monday|friday|new year))\b/i;
const LIST_CHROME = /\bunsubscribe\b|\bview (this|it) (email )?in (your|a) browser\b/i;
// A short line with no closing punctuation is a heading or a label, not a sentence.
const HEADING = /^[^.!?]{1,60}$/;

export function summarize(subject: string, sentences: string[]): string {
  const picked: string[] = [];
  let length = 0;
  for (const sentence of sentences) {
    if (PLEASANTRY.test(sentence) || LIST_CHROME.test(sentence) || HEADING.test(sentence)) continue;
    if (picked.length > 0 && length + 1 + sentence.length > SUMMARY_LENGTH) break;
    picked.push(sentence);
    length += (picked.length > 1 ? 1 : 0) + sentence.length;
    if (length >= SUMMARY_LENGTH / 2) break;
  }
  const text = picked.join(' ') || subject.trim() || '(empty message)';
  return shorten(text, SUMMARY_LENGTH);
}
