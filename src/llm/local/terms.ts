// Words as the local model compares them: lowercased, stopwords (the `stopword` package's English
// list) dropped, and reduced to Porter2 stems, so "invoices", "invoiced" and "invoice" are one term.
// The stemmer ships no types: its declaration is beside this file, and the package build starts from
// src/index.ts alone, so it is named here.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./wink-porter2-stemmer.d.ts" />
import { eng } from 'stopword';
import stem = require('wink-porter2-stemmer');

const STOPWORDS = new Set(eng);
/** Longer tokens are ids, hashes or URLs, not words: kept as they are, since stemming them is slow. */
const MAX_WORD = 30;
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** The lowercased words of a text, in order, stopwords included. */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'"));
}

export function stemOf(word: string): string {
  const lower = word.toLowerCase();
  return lower.length > MAX_WORD ? lower : stem(lower);
}

/** The stems of a text's content words, in order. */
export function terms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(stemOf);
}

/** A set of cue stems, written as plain words so the lists read as English. */
export function cueSet(cueWords: readonly string[]): ReadonlySet<string> {
  return new Set(cueWords.map(stemOf));
}
