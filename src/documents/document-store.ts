// An agent's documents: upload (chunked and indexed in one transaction, then embedded when an
// embedding provider is configured), list, read, delete, and search (hybrid-search.ts). Every call
// is scoped to the agent: another agent's document is a 404.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { storedAtSchema } from '../core/types';
import { NotFoundError } from '../errors';
import { chunkText, type ChunkOptions } from './chunker';
import type { Embeddings } from '../llm/embeddings';
import { isModelError } from '../llm/language-model';
import { ChunkEmbedder } from './chunk-embedder';
import type { DocumentSearch, SearchAnswer } from './document-search';
import { PgFullTextSearch } from './full-text-search';
import { HybridSearch } from './hybrid-search';
import type { DocumentInput } from './document-input';
import { VectorSearch, type VectorEngine } from './vector-search';

/** HTTP.md's document: `{id, title, chunk_count, created_at}`. */
export const documentViewSchema = z.object({
  id: z.number().int(),
  title: z.string(),
  chunk_count: z.number().int(),
  created_at: storedAtSchema,
});
export type DocumentView = z.output<typeof documentViewSchema>;

export interface DocumentStoreOptions {
  /** The provider of semantic search; none: search by words only, and nothing sent anywhere. */
  embeddings?: Embeddings;
  /** Which engine computes cosines (vector-index.ts finds out); default exact SQL. */
  vectorEngine?: () => VectorEngine;
  /** Told when the provider fails: an upload is kept unembedded, a search goes by words only. */
  onEmbeddingFailure?: (err: unknown) => void;
  chunks?: ChunkOptions;
}

interface DocumentRow {
  id: number | string;
  title: string | null;
  chunk_count: number | string;
  created_at: Date | null;
}

const VIEW_COLUMNS = `d.id, d.title, d.created_at,
  (SELECT count(*) FROM document_chunks c WHERE c.document_id = d.id) AS chunk_count`;

export class DocumentStore implements DocumentSearch {
  private readonly searcher: DocumentSearch;
  /** Set when an embedding provider is configured. */
  readonly embedder: ChunkEmbedder | undefined;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly options: DocumentStoreOptions = {},
  ) {
    const { embeddings, vectorEngine, onEmbeddingFailure } = options;
    this.embedder = embeddings ? new ChunkEmbedder(sequelize, embeddings) : undefined;
    this.searcher = new HybridSearch(sequelize, {
      lexical: new PgFullTextSearch(sequelize),
      ...(embeddings ? { semantic: { embeddings, vectors: new VectorSearch(sequelize, vectorEngine) } } : {}),
      ...(onEmbeddingFailure ? { onSemanticFailure: onEmbeddingFailure } : {}),
    });
  }

  /**
   * Stored, chunked and indexed in one transaction; then embedded, outside it (no transaction waits
   * on the provider). A provider that fails leaves the chunks to the re-embedding job: the upload
   * stands, and its words are searchable at once.
   */
  async add(agentId: number, input: DocumentInput): Promise<DocumentView> {
    const view = await this.store(agentId, input);
    if (this.embedder) {
      try {
        await this.embedder.embedPending({ documentId: view.id });
      } catch (err) {
        if (!isModelError(err)) throw err;
        this.options.onEmbeddingFailure?.(err);
      }
    }
    return view;
  }

  private async store(agentId: number, input: DocumentInput): Promise<DocumentView> {
    const chunks = await this.chunksOf(input.content);
    return this.sequelize.transaction(async (transaction) => {
      await this.lockAgent(agentId, transaction);
      const [doc] = await this.sequelize.query<DocumentRow>(
        `INSERT INTO documents (agent_id, title, content, created_at) VALUES ($1, $2, $3, now())
         RETURNING id, title, created_at, 0 AS chunk_count`,
        { bind: [agentId, input.title, input.content], type: QueryTypes.SELECT, transaction },
      );
      await this.insertChunks(doc!.id, agentId, chunks, transaction);
      return toView({ ...doc!, chunk_count: chunks.length });
    });
  }

  /**
   * Chunks every document that has none yet: rows a legacy application wrote into an adopted
   * documents table, before toolgate's index existed or since. Run after migrations (tg.migrate()
   * does); idempotent, and safe from several instances at once. Returns how many were chunked.
   */
  async indexUnchunked(batch = 100): Promise<number> {
    let indexed = 0;
    let after = '0';
    for (;;) {
      const docs = await this.sequelize.query<{ id: string; agent_id: string; content: string }>(
        `SELECT d.id::text AS id, d.agent_id::text AS agent_id, d.content FROM documents d
          WHERE d.id > :after::bigint AND d.agent_id IS NOT NULL AND d.content IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM document_chunks c WHERE c.document_id = d.id)
          ORDER BY d.id LIMIT :batch`,
        { replacements: { after, batch }, type: QueryTypes.SELECT },
      );
      for (const doc of docs) {
        const chunks = await this.chunksOf(doc.content);
        if (chunks.length === 0) continue;
        await this.insertChunks(doc.id, doc.agent_id, chunks);
        indexed++;
      }
      if (docs.length < batch) return indexed;
      after = docs[docs.length - 1]!.id;
    }
  }

  /** A document's chunks, found without holding the event loop for long (a document is up to 1 MB). */
  private async chunksOf(content: string): Promise<string[]> {
    return (await chunkText(content, this.options.chunks)).map((c) => c.content);
  }

  /** A chunk already there is kept: another instance may be indexing the same adopted document. */
  private async insertChunks(
    documentId: number | string,
    agentId: number | string,
    chunks: readonly string[],
    transaction?: Transaction,
  ): Promise<void> {
    if (chunks.length === 0) return;
    await this.sequelize.query(
      `INSERT INTO document_chunks (document_id, agent_id, chunk_index, content)
       SELECT $1, $2, ord - 1, chunk FROM unnest($3::text[]) WITH ORDINALITY AS t(chunk, ord)
       ON CONFLICT (document_id, chunk_index) DO NOTHING`,
      { bind: [documentId, agentId, [...chunks]], ...(transaction ? { transaction } : {}) },
    );
  }

  /** Oldest first. */
  async list(agentId: number): Promise<DocumentView[]> {
    const rows = await this.sequelize.query<DocumentRow>(
      `SELECT ${VIEW_COLUMNS} FROM documents d WHERE d.agent_id = :agentId ORDER BY d.id`,
      { replacements: { agentId }, type: QueryTypes.SELECT },
    );
    return rows.map(toView);
  }

  async get(agentId: number, documentId: number): Promise<DocumentView> {
    const [row] = await this.sequelize.query<DocumentRow>(
      `SELECT ${VIEW_COLUMNS} FROM documents d WHERE d.id = CAST(:documentId AS bigint) AND d.agent_id = :agentId`,
      { replacements: { agentId, documentId: idParam(documentId) }, type: QueryTypes.SELECT },
    );
    if (!row) throw notFound(agentId, documentId);
    return toView(row);
  }

  /** Its chunks go with it (ON DELETE CASCADE). */
  async delete(agentId: number, documentId: number): Promise<void> {
    const deleted = await this.sequelize.query<{ id: number }>(
      'DELETE FROM documents WHERE id = CAST(:documentId AS bigint) AND agent_id = :agentId RETURNING id',
      { replacements: { agentId, documentId: idParam(documentId) }, type: QueryTypes.SELECT },
    );
    if (deleted.length === 0) throw notFound(agentId, documentId);
  }

  search(agentId: number, query: string, topK: number): Promise<SearchAnswer> {
    return this.searcher.search(agentId, query, topK);
  }

  /** The agent must exist, and cannot be deleted while its document is being written. */
  private async lockAgent(agentId: number, transaction: Transaction): Promise<void> {
    const found = await this.sequelize.query('SELECT id FROM agents WHERE id = :agentId FOR KEY SHARE', {
      replacements: { agentId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (found.length === 0) throw new NotFoundError(`Agent ${agentId}`);
  }
}

function toView(row: DocumentRow): DocumentView {
  return {
    id: Number(row.id),
    title: row.title ?? '',
    chunk_count: Number(row.chunk_count),
    created_at: row.created_at ? row.created_at.toISOString() : null,
  };
}

function notFound(agentId: number, documentId: number): NotFoundError {
  return new NotFoundError(`Document ${documentId} of agent ${agentId}`);
}

/** An id no document can have (not a safe positive integer) still reads as "not found", not a database error. */
function idParam(documentId: number): number {
  return Number.isSafeInteger(documentId) && documentId > 0 ? documentId : 0;
}
