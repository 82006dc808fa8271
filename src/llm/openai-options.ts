// What OpenAIModel and OpenAIEmbeddings take to reach an OpenAI-compatible API. Apart from
// openai-client.ts on purpose: these are public declarations, and the openai package is an optional
// peer, so nothing a host's compiler reads from toolgate's entry may name its types (a strict host
// without openai installed, and without skipLibCheck, must compile).
export interface OpenAIClientOptions {
  apiKey: string;
  /** The API root, e.g. http://127.0.0.1:8080/v1; unset: the client's default (OpenAI's API). */
  baseURL?: string;
  /** The most one call may take, retries and waits included. */
  timeoutMs?: number;
  /** Further attempts after a connection failure, 408, 409, 429 or 5xx. */
  maxRetries?: number;
}
