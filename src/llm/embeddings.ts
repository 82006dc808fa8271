// The one small interface behind semantic search: texts in, one vector per text out. Which
// implementation runs is configuration (OpenAIEmbeddings, or a host's own); with none, search goes
// by words only and nothing is sent anywhere.

export interface Embeddings {
  /** The model's name, stored beside every vector it made: a vector is compared only with its own kind. */
  readonly model: string;
  /** The vectors' length, when known before the first call; otherwise the first answer's length. */
  readonly dimensions?: number;
  /**
   * One vector per text, in the texts' order, all of one length. Throws a ModelError when the
   * provider fails or answers with something else (never a partial answer).
   */
  embed(texts: readonly string[]): Promise<number[][]>;
}

/** The model and the length that made a vector: vectors of two spaces are never compared. */
export interface EmbeddingSpace {
  model: string;
  dimensions: number;
}

/** The vector scaled to length 1, so that a dot product is a cosine; a zero vector stays zero. */
export function unitVector(vector: readonly number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm === 0 ? [...vector] : vector.map((x) => x / norm);
}
