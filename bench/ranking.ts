// `npm run bench:ranking`: how well document search ranks, on the Cranfield test collection
// (bench/data/cranfield: 1,400 abstracts, 225 queries, graded relevance judgements). Each ranking
// below gets the same documents and the same queries, verbatim, and returns up to 50 document ids
// per query, best first; MAP@50 and nDCG@10 (bench/ranking-metrics.ts) are computed against the
// judgements and printed side by side. Prints figures; never passes or fails.
//
// toolgate's lexical search (PgFullTextSearch: a DocumentStore with no embedding provider searches
// by words only) runs on a throwaway embedded PostgreSQL, or in a database of its own on
// DATABASE_URL's server when set. BM25 is the reference: wink-bm25-text-search with its default
// parameters, over the same texts.
//
// Another ranking is one more entry in RANKINGS: a function from the collection to document ids
// per query. A DocumentStore made with other options is documentStoreRanking(name, storeFor).
import { QueryTypes, type Sequelize } from 'sequelize';
import bm25 = require('wink-bm25-text-search');
import nlp = require('wink-nlp-utils');
import { createSequelize } from '../src/db/connect';
import { migrateUp } from '../src/db/migrate';
import { MAX_TOP_K } from '../src/documents/document-search';
import { DocumentStore } from '../src/documents/document-store';
import { parseSearchQuery } from '../src/documents/search-query';
import { judgementsOf, loadCranfield, type Collection } from './cranfield';
import { withBenchDatabase } from './postgres-server';
import { OpenAIEmbeddings } from '../src/llm/openai-embeddings';
import { startFakeEmbeddings, type FakeEmbeddings } from '../test/support/fake-embeddings';
import { averagePrecision, mean, ndcgAtK, rankDocuments, type Judgements } from './ranking-metrics';

/** How deep each ranking goes, and where average precision is cut: the most one search returns. */
const DEPTH = MAX_TOP_K;
const NDCG_K = 10;

/** Document ids per query id, best first, at most DEPTH of them, each once. */
type QueryRankings = Map<number, number[]>;

interface Ranking {
  name: string;
  rank(collection: Collection): Promise<QueryRankings>;
}

/**
 * A DocumentStore's search, as the search route calls it: one agent holds every document (title and
 * text through add()), each query asks for the top DEPTH chunks, and a document ranks at its best
 * chunk. So fewer than DEPTH documents come back when several chunks of one document are found.
 */
function documentStoreRanking(name: string, storeFor: (sequelize: Sequelize) => DocumentStore): Ranking {
  return {
    name,
    rank: (collection) =>
      withBenchDatabase('ranking', async (url) => {
        const sequelize = createSequelize(url);
        try {
          await migrateUp(sequelize);
          const store = storeFor(sequelize);
          const [agent] = await sequelize.query<{ id: number }>("INSERT INTO agents (name) VALUES ('Cranfield') RETURNING id", {
            type: QueryTypes.SELECT,
          });
          const ids = new Map<number, number>(); // toolgate's document id to the collection's
          for (const doc of collection.documents) {
            ids.set((await store.add(agent!.id, { title: doc.title, content: doc.text })).id, doc.id);
          }
          const rankings: QueryRankings = new Map();
          for (const query of collection.queries) {
            const { hits } = await store.search(agent!.id, query.text, DEPTH);
            rankings.set(query.id, rankDocuments(hits.map((h) => ids.get(h.document_id)!)));
          }
          return rankings;
        } finally {
          await sequelize.close();
        }
      }),
  };
}

/**
 * Okapi BM25 over each document's text (k1 1.2, b 0.75: the library's defaults), tokenised about as
 * PostgreSQL's english configuration does: lower case, split on non-word characters, stop words
 * removed (the library's list), Porter2 stems (PostgreSQL's english Snowball stemmer is Porter2 too).
 */
const bm25Ranking: Ranking = {
  name: 'BM25 (wink-bm25-text-search)',
  rank: async (collection) => {
    const engine = bm25();
    engine.defineConfig({ fldWeights: { text: 1 }, bm25Params: { k1: 1.2, b: 0.75 } });
    engine.definePrepTasks([nlp.string.lowerCase, nlp.string.tokenize0, nlp.tokens.removeWords, nlp.tokens.stem]);
    for (const doc of collection.documents) engine.addDoc({ text: doc.text }, doc.id);
    engine.consolidate();
    return new Map(collection.queries.map((q) => [q.id, engine.search(q.text, DEPTH).map(([id]) => Number(id))]));
  },
};

/**
 * The hybrid path (lexical and semantic lists fused by reciprocal rank) with the tests' fake
 * embeddings server: its vectors are a toy (a word's direction is a hash of the word; a few synonyms
 * share one), so this row shows the plumbing working end to end on a real collection (every
 * document embedded, every query embedded and fused), not what a real embeddings model would score.
 */
function hybridRanking(fake: FakeEmbeddings): Ranking {
  return documentStoreRanking(
    'toolgate hybrid (fake embeddings)',
    (sequelize) =>
      new DocumentStore(sequelize, {
        embeddings: new OpenAIEmbeddings({ apiKey: 'sk-bench', baseURL: fake.baseURL, model: 'fake-embed', dimensions: FAKE_DIMENSIONS }),
      }),
  );
}
const FAKE_DIMENSIONS = 256;

interface Scores {
  map: number;
  ndcg: number;
  noHit: number;
  meanDocuments: number;
}

function score(rankings: QueryRankings, judgements: Map<number, Judgements>, queryIds: readonly number[]): Scores {
  const ranked = queryIds.map((id) => rankings.get(id) ?? []);
  return {
    map: mean(queryIds.map((id, i) => averagePrecision(ranked[i]!, judgements.get(id)!, DEPTH))),
    ndcg: mean(queryIds.map((id, i) => ndcgAtK(ranked[i]!, judgements.get(id)!, NDCG_K))),
    noHit: ranked.filter((r) => r.length === 0).length,
    meanDocuments: mean(ranked.map((r) => r.length)),
  };
}

/** The queries with at least one relevant document: the metrics are undefined for the others. */
function judgedQueries(collection: Collection, judgements: Map<number, Judgements>): number[] {
  return collection.queries.map((q) => q.id).filter((id) => [...(judgements.get(id)?.values() ?? [])].some((gain) => gain > 0));
}

function table(title: string, results: { name: string; scores: Scores }[]): string {
  const width = Math.max(...results.map((r) => r.name.length), 'ranking'.length) + 2;
  const head = `  ${'ranking'.padEnd(width)}${'MAP@50'.padStart(8)}${'nDCG@10'.padStart(10)}${'queries with no hit'.padStart(22)}${'documents per query'.padStart(22)}`;
  const rows = results.map(
    ({ name, scores: s }) =>
      `  ${name.padEnd(width)}${s.map.toFixed(3).padStart(8)}${s.ndcg.toFixed(3).padStart(10)}${String(s.noHit).padStart(22)}${s.meanDocuments
        .toFixed(1)
        .padStart(22)}`,
  );
  return [title, head, ...rows].join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const full = loadCranfield();
  // Two abstracts of the collection are empty: the upload API refuses an empty document, so neither ranking gets them.
  const collection = { ...full, documents: full.documents.filter((d) => d.text !== '') };
  const results: { name: string; rankings: QueryRankings; seconds: number }[] = [];
  const fake = await startFakeEmbeddings();
  const RANKINGS: Ranking[] = [
    documentStoreRanking('toolgate lexical', (sequelize) => new DocumentStore(sequelize)),
    hybridRanking(fake),
    bm25Ranking,
  ];
  try {
    for (const ranking of RANKINGS) {
      const t0 = performance.now();
      const rankings = await ranking.rank(collection);
      results.push({ name: ranking.name, rankings, seconds: (performance.now() - t0) / 1000 });
    }
  } finally {
    await fake.close();
  }
  const fakeCalls = fake.requests.length;

  const graded = judgementsOf(full, 'graded');
  const binary = judgementsOf(full, 'binary');
  const gradedQueries = judgedQueries(full, graded);
  const binaryQueries = judgedQueries(full, binary);
  const left = (ids: number[]) => full.queries.length - ids.length;
  const excluding = full.queries.filter((q) => parseSearchQuery(q.text).exclude.length > 0);
  console.log(
    table(
      `${full.name} (${full.documents.length} documents, ${full.queries.length} queries)`,
      results.map((r) => ({ name: r.name, scores: score(r.rankings, graded, gradedQueries) })),
    ),
  );
  const without = [...new Set(excluding.flatMap((q) => parseSearchQuery(q.text).exclude))].join(', ');
  console.log(
    [
      `  Judgements: grades 1 (a complete answer) to 4 are relevant, with nDCG gain 5 - grade; grade -1`,
      `  (one document per query) is not. ${gradedQueries.length} queries scored, ${left(gradedQueries)} left out for having no relevant document.`,
      `  MAP@50: average precision over the top ${DEPTH} documents, over all of a query's relevant documents.`,
      `  toolgate returns at most ${DEPTH} chunks; a document ranks at its best one, so fewer documents may come.`,
      `  ${full.documents.length - collection.documents.length} empty documents are indexed by neither ranking. Queries are sent verbatim; ${excluding.length} hold`,
      `  -${without}, which toolgate's search syntax reads as "without ${without}".`,
      `  The hybrid row's embeddings are the tests' fake server (${fakeCalls} requests, ${fake.inputs.length} texts, ${FAKE_DIMENSIONS} dimensions):`,
      `  a toy whose vectors are hashed words, so the row shows the fused path end to end, not a real model's quality.`,
      '',
    ].join('\n'),
  );
  console.log(
    table(
      'The same rankings, every judged pair relevant (grade -1 included), gain 1',
      results.map((r) => ({ name: r.name, scores: score(r.rankings, binary, binaryQueries) })),
    ),
  );
  console.log(`  ${binaryQueries.length} queries scored; ${left(binaryQueries)} left out.\n`);
  console.log(
    `time: ${results.map((r) => `${r.name} ${r.seconds.toFixed(1)} s (index and search)`).join(', ')}; ` +
      `total ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
