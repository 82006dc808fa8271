// Types for the two wink packages the BM25 reference ranking uses (bench/ranking.ts); neither ships
// any. Only what the benchmark calls is declared.
declare module 'wink-bm25-text-search' {
  namespace bm25 {
    interface Config {
      /** The fields indexed, each with its weight (BM25F). */
      fldWeights: Record<string, number>;
      /** Defaults: k1 1.2, b 0.75, and k 1 (added inside the IDF's logarithm, so it stays positive). */
      bm25Params?: { k1?: number; b?: number; k?: number };
    }
    interface Engine {
      defineConfig(config: Config): boolean;
      /** Applied in order to each field's text, and to the query. */
      definePrepTasks(tasks: ((input: never) => unknown)[], field?: string): number;
      addDoc(doc: Record<string, string>, id: string | number): number;
      consolidate(fp?: number): boolean;
      /** [document id, score] pairs, best first; at most `limit` (default 10). */
      search(text: string, limit?: number): [string, number][];
    }
  }
  function bm25(): bm25.Engine;
  export = bm25;
}

declare module 'wink-nlp-utils' {
  const utils: {
    string: { lowerCase(text: string): string; tokenize0(text: string): string[] };
    tokens: { removeWords(tokens: string[]): string[]; stem(tokens: string[]): string[] };
  };
  export = utils;
}
