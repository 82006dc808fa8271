// Where the pgvector extension is installed on the server, semantic search uses it: its cosine
// operator in place of toolgate_dot, and an HNSW index over the vectors of the configured model
// and dimensions, which answers a nearest-chunks query without reading every vector. The extension
// is optional: without it (the embedded server has none) the exact SQL search answers the same
// queries, by reading the agent's vectors.
import { createHash } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { scopedNameSql } from '../db/schema';
import type { EmbeddingSpace } from '../llm/embeddings';
import { HNSW_MAX_DIMENSIONS, type VectorEngine } from './vector-search';

/** setTimeout's longest delay (about 24.8 days). */
const NO_READ_TIMEOUT_MS = 2 ** 31 - 1;

export interface VectorIndexState {
  engine: VectorEngine;
  /** The HNSW index's name, when one serves the configured space. */
  index: string | null;
  /** Why pgvector is not used, when it is not. */
  reason?: string;
}

/** The raw driver connection a build holds for itself: CREATE INDEX CONCURRENTLY runs outside any transaction. */
interface DriverConnection {
  query(sql: string | { text: string; query_timeout: number }): Promise<{ rows: Record<string, unknown>[] }>;
}
interface ConnectionLending {
  getConnection(options?: object): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<void>;
}

export class VectorIndex {
  private state: VectorIndexState = { engine: 'exact', index: null, reason: 'not prepared yet (tg.migrate() prepares it)' };
  private building: Promise<VectorIndexState> = Promise.resolve(this.state);
  /** The server process of the build in progress, so that stop() can cancel it. */
  private builder: number | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly onBuildFailure: (err: unknown) => void = () => undefined,
  ) {}

  /** The engine searches use now. */
  readonly engine = (): VectorEngine => this.state.engine;

  current(): VectorIndexState {
    return this.state;
  }

  /**
   * Uses pgvector when the server has it: creates the extension when it is available but not
   * created (which needs the right to), and from then on ranks by its operator. The HNSW index for
   * `space` is built in the background (`whenBuilt()`), CONCURRENTLY and with no statement timeout:
   * on a large table it takes minutes, which must neither hold up a start nor block uploads.
   * Anything short of pgvector leaves the exact search in place and says why; never a failure.
   */
  async prepare(space: EmbeddingSpace | undefined): Promise<VectorIndexState> {
    this.state = await this.tryPgvector();
    if (this.state.engine === 'pgvector') {
      if (!space) this.state = { ...this.state, reason: 'the dimensions are not known until the provider first answers' };
      else if (space.dimensions > HNSW_MAX_DIMENSIONS)
        this.state = {
          ...this.state,
          reason: `pgvector's HNSW index takes at most ${HNSW_MAX_DIMENSIONS} dimensions: pgvector ranks without it`,
        };
      else {
        const index = hnswIndexName(space);
        this.state = {
          engine: 'pgvector',
          index: null,
          reason: `the HNSW index ${index} is being built: pgvector ranks without it meanwhile`,
        };
        this.building = this.build(space, index).then(
          () => (this.state = { engine: 'pgvector', index }),
          (err: unknown) => {
            this.onBuildFailure(err);
            return (this.state = {
              engine: 'pgvector',
              index: null,
              reason: `the HNSW index could not be built (${(err as Error).message})`,
            });
          },
        );
      }
    }
    return this.state;
  }

  /** Settles when the background build (if any) has ended, with the state it left. */
  whenBuilt(): Promise<VectorIndexState> {
    return this.building;
  }

  /**
   * Cancels a build in progress and waits for it to end: a build holds a pool connection for
   * minutes, and closing the pool would wait for it. The invalid index it leaves is rebuilt by the
   * next prepare().
   */
  async stop(): Promise<void> {
    const pid = this.builder;
    if (pid !== null) await this.sequelize.query(`SELECT pg_cancel_backend(${pid})`).catch(() => undefined);
    await this.building;
  }

  private async tryPgvector(): Promise<VectorIndexState> {
    const [rows] = (await this.sequelize.query(`SELECT default_version FROM pg_available_extensions WHERE name = 'vector'`)) as [
      unknown[],
      unknown,
    ];
    if (rows.length === 0) return { engine: 'exact', index: null, reason: 'the server has no pgvector extension' };
    try {
      await this.sequelize.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch (err) {
      return { engine: 'exact', index: null, reason: `pgvector could not be created here (${(err as Error).message})` };
    }
    // A toolgate in a schema of its own searches that schema alone: pgvector installed in another
    // (public, by the host) is out of its reach, and its type and operator would not resolve.
    const [[found]] = (await this.sequelize.query(`SELECT to_regtype('vector') IS NOT NULL AS reachable`)) as [
      { reachable: boolean }[],
      unknown,
    ];
    if (!found?.reachable) {
      return { engine: 'exact', index: null, reason: "pgvector is installed in a schema outside toolgate's search_path" };
    }
    return { engine: 'pgvector', index: null };
  }

  /** One build on a connection of its own; an index a killed build left invalid is built again. */
  private async build(space: EmbeddingSpace, index: string): Promise<void> {
    const lending = this.sequelize.connectionManager as unknown as ConnectionLending;
    const connection = await lending.getConnection();
    const { rows: me } = await connection.query('SELECT pg_backend_pid() AS pid');
    this.builder = Number(me[0]?.pid);
    // One builder at a time across instances: another's build in progress looks like an invalid index.
    const lock = `hashtext(${scopedNameSql(`toolgate_hnsw:${index}`)})`;
    let locked = false;
    try {
      const { rows: got } = await connection.query(`SELECT pg_try_advisory_lock(${lock}) AS locked`);
      locked = got[0]?.locked === true;
      if (!locked) return;
      await connection.query('SET statement_timeout = 0');
      const { rows } = await connection.query(`SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('${index}')`);
      if (rows[0]?.indisvalid === true) return;
      // No client read timeout either (the driver's query_timeout, which the pool's connections
      // carry): the driver reads 0 as "use the connection's", so the longest timer Node allows.
      const untimed = (text: string) => connection.query({ text, query_timeout: NO_READ_TIMEOUT_MS });
      if (rows.length > 0) await untimed(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
      const model = this.sequelize.escape(space.model);
      const dims = space.dimensions;
      await untimed(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index} ON document_chunks USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
          WHERE embedding_model = ${model} AND embedding_dimensions = ${dims}`,
      );
    } finally {
      await connection.query('RESET statement_timeout').catch(() => undefined);
      if (locked) await connection.query(`SELECT pg_advisory_unlock(${lock})`).catch(() => undefined);
      this.builder = null;
      await lending.releaseConnection(connection);
    }
  }
}

/** One index per space; the model's name is hashed, as it may hold any character. */
function hnswIndexName(space: EmbeddingSpace): string {
  const hash = createHash('sha256').update(space.model).digest('hex').slice(0, 12);
  return `document_chunks_toolgate_hnsw_${space.dimensions}_${hash}`;
}
