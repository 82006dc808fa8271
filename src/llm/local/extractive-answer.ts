// Answers a question with sentences quoted from the sources, never with words of its own: each
// source sentence is scored by the share of the question's terms it contains (stemmed, weighted by
// how rare each term is across the sentences), and the best few are returned verbatim.
import { NO_ANSWER, type ModelSource } from '../language-model';
import { sentencesOf } from './email-text';
import { terms } from './terms';

/** Past this, a source is read only in part (a chunk is far shorter): answers stay fast. */
const MAX_SOURCE_CHARS = 50_000;
/** A sentence must cover at least this share of the question's weight to be quoted. */
const MIN_SCORE = 0.3;
/** Runners-up are quoted too when they score at least this share of the best sentence. */
const RUNNER_UP = 0.6;
const MAX_SENTENCES = 3;

interface Candidate {
  text: string;
  order: number;
  terms: Set<string>;
}

/** The source's sentences that occur in it verbatim: sbd's output is checked, never trusted. */
function candidatesOf(sources: ModelSource[]): Candidate[] {
  const out: Candidate[] = [];
  for (const source of sources) {
    // Line by line, in pieces sbd splits in linear time: a source may be one long line.
    for (const text of sentencesOf(source.text.slice(0, MAX_SOURCE_CHARS).split('\n'))) {
      if (!source.text.includes(text)) continue;
      out.push({ text, order: out.length, terms: new Set(terms(text)) });
    }
  }
  return out;
}

/** The answer: one quoted sentence a line, best first, or NO_ANSWER. */
export function extractiveAnswer(question: string, sources: ModelSource[]): string {
  const asked = [...new Set(terms(question))];
  if (asked.length === 0) return NO_ANSWER;
  const candidates = candidatesOf(sources);
  const weight = new Map<string, number>();
  for (const term of asked) {
    const df = candidates.filter((c) => c.terms.has(term)).length;
    weight.set(term, Math.log(1 + (candidates.length + 1) / (df + 1)));
  }
  const total = asked.reduce((sum, t) => sum + (weight.get(t) ?? 0), 0);
  const scored = candidates
    .map((c) => ({ c, score: asked.reduce((sum, t) => sum + (c.terms.has(t) ? (weight.get(t) ?? 0) : 0), 0) / total }))
    .filter((s) => s.score >= MIN_SCORE)
    .sort((a, b) => b.score - a.score || a.c.order - b.c.order);
  if (scored.length === 0) return NO_ANSWER;
  const floor = scored[0].score * RUNNER_UP;
  const picked: string[] = [];
  for (const { c, score } of scored) {
    if (picked.length >= MAX_SENTENCES || score < floor) break;
    if (!picked.includes(c.text)) picked.push(c.text);
  }
  return picked.join('\n');
}
