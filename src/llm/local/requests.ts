// Which sentences ask the reader to do something, and the action item each one becomes. A request
// is a polite marker ("please", "let me know"), a question put to the reader, a stated need
// ("I'd like", "we need"), or an imperative: a sentence that opens on a bare verb, as tagged by
// `compromise`'s part-of-speech tagger, has no subject, and does not open on praise ("Love the
// new menu!", "Keep up the great work").
import nlp from 'compromise';
import type { ActionItem } from '../email-analysis';
import { dueDate } from './due-date';
import { shorten, trimTrailing } from './shorten';
import { toneScore } from './tone';

export const MAX_ACTION_ITEMS = 8;
const MAX_TITLE = 120;
// Requests come early and are short: past these, sentences are not read for requests, which keeps
// the tagger and the date parser fast on pasted logs.
const MAX_SCANNED_SENTENCES = 60;
const MAX_REQUEST_LENGTH = 600;

const MARKER = /\b(please|kindly|rsvp|let (me|us) know)\b/i;
// A question to the reader: its last line names "you", "your" or "we", and the sentence ends with "?".
const READER = /\b(you|your|we)\b/i;
const LINE_END = /[\n\r\u2028\u2029]/;
const STATED_NEED = /\b(i|we)(['’]d| would) (like|love|appreciate)\b|\b(i|we) (need|want|expect)\b|\bneed you to\b/i;
// Courtesies that look like requests and ask for nothing.
const COURTESY =
  /\b(any|further|other) questions\b|\b(don['’]t|do not) hesitate\b|\bfeel free\b|\blooking forward\b|\bhear(ing)? (back )?from you\b|\b(find|see) attached\b|\bhave a (great|good|nice|lovely)\b|\bthank(s| you)\b/i;
// Words that open a sentence without changing what it asks: "Also, please ...", "Mara, can you ...".
// A subject in the first few words means a statement, whatever the tagger made of its first word.
const EARLY_SUBJECT = /^(\S+\s+){0,3}(i|we|they|he|she)\b/i;
const PRAISE_WINDOW = 4;
const OPENER = /^(?:(?:also|so|and|but|then|finally|please|kindly|ok(?:ay)?|approved)\b[,:]?\s*|[a-z]+,\s+)+/i;

export function isRequest(sentence: string): boolean {
  if (COURTESY.test(sentence)) return false;
  if (MARKER.test(sentence) || questionToReader(sentence) || STATED_NEED.test(sentence)) return true;
  const clause = sentence.replace(OPENER, '');
  if (EARLY_SUBJECT.test(clause) || toneScore(clause.split(/\s+/).slice(0, PRAISE_WINDOW).join(' ')) > 0) return false;
  return nlp(clause).has('^#Infinitive');
}

/** What `/\b(you|your|we)\b.*\?$/i` said, in linear time: the regex retried `.*` from every "you". */
function questionToReader(sentence: string): boolean {
  if (!sentence.endsWith('?')) return false;
  // `.` stops at line terminators, so the word had to be on the last line.
  let start = sentence.length;
  while (start > 0 && !LINE_END.test(sentence[start - 1]!)) start--;
  return READER.test(sentence.slice(start));
}

function titleOf(sentence: string): string {
  return shorten(capitalize(trimTrailing(sentence.replace(OPENER, ''), (c) => c === '.' || c === '!').trim()) || sentence, MAX_TITLE);
}

/** The action item a request sentence becomes: a short title, and its date if it names one. */
export function toActionItem(sentence: string, reference: Date): ActionItem {
  const title = titleOf(sentence);
  const due = dueDate(sentence, reference);
  return due ? { title, due } : { title };
}

/** The action items of a message's sentences, in order, at most MAX_ACTION_ITEMS, titles unique. */
export function actionItems(sentences: string[], reference: Date): ActionItem[] {
  const items: ActionItem[] = [];
  const seen = new Set<string>();
  for (const sentence of sentences.slice(0, MAX_SCANNED_SENTENCES)) {
    if (items.length >= MAX_ACTION_ITEMS) break;
    if (sentence.length > MAX_REQUEST_LENGTH) continue;
    // A sentence read once is not read again: a repeated request is one item.
    const key = titleOf(sentence).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    if (isRequest(sentence)) items.push(toActionItem(sentence, reference));
  }
  return items;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
