// `ask`: answers a question from the top chunks of an agent's documents, and returns those chunks
// as its sources. The language model (src/llm) words the answer; with no source there is nothing
// to answer from, and the model is not asked.
import { NO_ANSWER, type ModelSource } from '../llm/language-model';
import { searchResult, type DocumentSearch, type SearchResult } from './document-search';

/**
 * Answers from the sources only: a LanguageModel's answerQuestion with its context bound, e.g.
 * `(q, sources) => model.answerQuestion(q, sources, ctx)`. The local model's answer is extractive.
 */
export type AnswerFn = (question: string, sources: ModelSource[]) => Promise<string>;

/** HTTP.md's ask response, less the routing key the route adds. */
export interface AskResult {
  answer: string;
  sources: SearchResult[];
}

export async function askDocuments(
  search: DocumentSearch,
  answer: AnswerFn,
  agentId: number,
  question: string,
  topK: number,
): Promise<AskResult> {
  const hits = await search.search(agentId, question, topK);
  if (hits.length === 0) return { answer: NO_ANSWER, sources: [] };
  const text = (
    await answer(
      question,
      hits.map((h) => ({ title: h.title, text: h.content })),
    )
  ).trim();
  return { answer: text || NO_ANSWER, sources: hits.map(searchResult) };
}
