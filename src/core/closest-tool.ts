// "Did you mean": the registered tool id a mistyped token most likely meant. Used to explain
// unknown ids to operators and to report legacy `enabled_tools` tokens that granted nothing.

/** Folds what the legacy check was strict about and people are not: case, hyphens, spaces. */
export function foldToolToken(token: string): string {
  return token
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/** Levenshtein distance, bounded: returns `limit + 1` as soon as the distance exceeds `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The id `token` most likely meant, or null when nothing is close: an exact match after folding
 * case, hyphens and whitespace, else the nearest id within a small edit distance (about one typo
 * per five characters, at most 3). Ties go to the first id in `ids`.
 */
export function closestToolId(token: string, ids: Iterable<string>): string | null {
  const folded = foldToolToken(token);
  if (folded === '') return null;
  const limit = Math.min(3, Math.max(1, Math.floor(folded.length / 5)));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const id of ids) {
    if (id === folded) return id;
    const d = editDistance(folded, id, limit);
    if (d < bestDistance) {
      best = id;
      bestDistance = d;
    }
  }
  return best;
}
