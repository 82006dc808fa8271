// Embeddings from any OpenAI-compatible /embeddings endpoint (OpenAI, or a local server such as
// Ollama, vLLM or llama.cpp's, by base URL), through the official client: texts sent in batches,
// each batch one call with the deadline and retries of openai-client.ts, every answer checked.
import { ToolgateConfigError } from '../errors';
import type { Embeddings } from './embeddings';
import { ModelError } from './language-model';
import { OpenAIClient } from './openai-client';
import type { OpenAIClientOptions } from './openai-options';

export interface OpenAIEmbeddingsOptions extends OpenAIClientOptions {
  /** e.g. text-embedding-3-small, or the local server's model name. */
  model: string;
  /**
   * The vectors' length. When set it is asked for (the `dimensions` parameter, which shortens
   * OpenAI's text-embedding-3 vectors) and every answer is held to it; unset, the model's own length.
   */
  dimensions?: number;
  /** The most texts one request carries. Default 64. */
  batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 64;
/** OpenAI's own limit of inputs per request. */
const MAX_BATCH_SIZE = 2048;

export class OpenAIEmbeddings implements Embeddings {
  readonly model: string;
  private readonly api: OpenAIClient;
  private readonly batchSize: number;
  private knownDimensions: number | undefined;
  private readonly askDimensions: boolean;

  constructor(options: OpenAIEmbeddingsOptions) {
    const { model, dimensions, batchSize = DEFAULT_BATCH_SIZE } = options;
    if (typeof model !== 'string' || model.trim() === '')
      throw new ToolgateConfigError('ERR_TOOLGATE_EMBEDDINGS', 'OpenAIEmbeddings needs a model name, e.g. text-embedding-3-small.');
    if (dimensions !== undefined && (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > 16_000))
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_EMBEDDINGS',
        `OpenAIEmbeddings' dimensions must be an integer from 1 to 16000 (got ${dimensions}).`,
      );
    if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE)
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_EMBEDDINGS',
        `OpenAIEmbeddings' batchSize must be an integer from 1 to ${MAX_BATCH_SIZE} (got ${batchSize}).`,
      );
    this.api = new OpenAIClient(options);
    this.model = model.trim();
    this.knownDimensions = dimensions;
    this.askDimensions = dimensions !== undefined;
    this.batchSize = batchSize;
  }

  get dimensions(): number | undefined {
    return this.knownDimensions;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + this.batchSize))));
    }
    return vectors;
  }

  private async embedBatch(input: string[]): Promise<number[][]> {
    const answer = await this.api.call((client, attempt) =>
      client.embeddings.create(
        {
          model: this.model,
          input,
          // Floats, not the client's default base64: local servers do not all speak base64.
          encoding_format: 'float',
          ...(this.askDimensions ? { dimensions: this.knownDimensions } : {}),
        },
        attempt,
      ),
    );
    const data = Array.isArray(answer?.data) ? [...answer.data].sort((a, b) => a.index - b.index) : [];
    if (data.length !== input.length || data.some((d, i) => d.index !== i))
      throw new ModelError('invalid_output', `The embeddings provider answered ${data.length} vectors for ${input.length} texts.`);
    return data.map((d) => this.checked(d.embedding));
  }

  /** Every vector of one length: the configured one, else the first answer's. */
  private checked(vector: unknown): number[] {
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw new ModelError('invalid_output', 'The embeddings provider answered a vector that is not a list of numbers.');
    this.knownDimensions ??= vector.length;
    if (vector.length !== this.knownDimensions)
      throw new ModelError(
        'invalid_output',
        `The embeddings provider answered a vector of ${vector.length} dimensions where ${this.knownDimensions} were expected: set the dimensions to the model's.`,
      );
    return vector as number[];
  }
}
