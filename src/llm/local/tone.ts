// Tone from the `sentiment` package's AFINN lexicon, with two adjustments for business mail:
// courtesy words carry no tone ("please", and "like" as in "I'd like"), and a negative word
// weighs 1.5 times a positive one, because polite phrasing pads even unhappy messages.
import Sentiment from 'sentiment';
import type { Sentiment as Tone } from '../email-analysis';

const afinn = new Sentiment();
// Left out of the sum rather than passed as `extras`, which the package merges into its shared lexicon.
const COURTESY_WORDS = new Set(['please', 'like']);
const NEGATIVITY_WEIGHT = 1.5;

/** At or beyond these marks the tone is positive or negative. */
export const TONE_MARK = 2;

export function toneScore(text: string): number {
  let score = 0;
  for (const entry of afinn.analyze(text).calculation) {
    for (const [word, value] of Object.entries(entry)) {
      if (!COURTESY_WORDS.has(word)) score += value < 0 ? value * NEGATIVITY_WEIGHT : value;
    }
  }
  return score;
}

export function toneOf(score: number): Tone {
  if (score >= TONE_MARK) return 'positive';
  if (score <= -TONE_MARK) return 'negative';
  return 'neutral';
}
