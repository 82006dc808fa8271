// Documents: chunking, PostgreSQL full-text search and ask, behind one store per toolgate.
//
//   const documents = new DocumentStore(sequelize);                 // search: PgFullTextSearch
//   const doc = await documents.add(agentId, { title, content });  // {id, title, chunk_count, created_at}
//   const hits = await documents.search(agentId, 'refund melted', 5);
//   const { answer, sources } = await askDocuments(documents, (q, s) => model.answerQuestion(q, s, ctx), agentId, question, 5);
export { askDocuments, type AnswerFn, type AskResult } from './ask';
export { chunkText, DEFAULT_CHUNK_OPTIONS, type Chunk, type ChunkOptions } from './chunker';
export { MAX_TOP_K, searchResult, type DocumentSearch, type SearchHit, type SearchResult } from './document-search';
export { DocumentStore, type DocumentStoreOptions, type DocumentView } from './document-store';
export { PgFullTextSearch } from './full-text-search';
export { DEFAULT_TOP_K, documentInputSchema, MAX_DOCUMENT_CHARS, queryTextSchema, topKSchema, type DocumentInput } from './schemas';
