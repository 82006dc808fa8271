// Vectors beside the chunks: each chunk's embedding, and the model and dimensions that made it, so
// that a changed model or size is seen per chunk (and re-embedded) instead of compared across spaces.
// Stored as real[] so that any PostgreSQL holds and searches them, the embedded one included; where
// the pgvector extension is installed, an HNSW index over `embedding::vector(n)` is added by the
// application (src/documents/vector-index.ts), not here: the extension is optional.
//
// toolgate_dot is the exact search's whole arithmetic: vectors are stored at unit length, so their
// dot product is their cosine. Costed high so that the planner scans a large agent in parallel. The
// unnests are in the select list: there they stream in step, where unnest(a, b) in FROM first
// materialises both arrays, about twice as slow (bench:vectors' experiment).
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `ALTER TABLE document_chunks
         ADD COLUMN embedding REAL[],
         ADD COLUMN embedding_model TEXT,
         ADD COLUMN embedding_dimensions INTEGER,
         ADD CONSTRAINT document_chunks_embedding_check CHECK (
           (embedding IS NULL AND embedding_model IS NULL AND embedding_dimensions IS NULL)
           OR (embedding_model IS NOT NULL AND embedding_dimensions > 0
               AND array_ndims(embedding) = 1 AND cardinality(embedding) = embedding_dimensions));
       CREATE INDEX document_chunks_agent_embedding_idx ON document_chunks (agent_id, embedding_model, embedding_dimensions);
       CREATE FUNCTION toolgate_dot(a REAL[], b REAL[]) RETURNS DOUBLE PRECISION
         LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000
         AS $$ SELECT sum(x::double precision * y) FROM (SELECT unnest(a) AS x, unnest(b) AS y) AS t $$;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`
    DROP FUNCTION toolgate_dot(REAL[], REAL[]);
    DROP INDEX document_chunks_agent_embedding_idx;
    ALTER TABLE document_chunks DROP CONSTRAINT document_chunks_embedding_check,
      DROP COLUMN embedding, DROP COLUMN embedding_model, DROP COLUMN embedding_dimensions;
  `);
}
