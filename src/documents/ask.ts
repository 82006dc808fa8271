// `ask`: answers a question from the top chunks of an agent's documents, and returns the chunks the
// answer stands on as its sources. The language model (src/llm) words the answer; with no chunk
// found there is nothing to answer from, and the model is not asked.
import { NO_ANSWER, type GroundedAnswer, type ModelSource } from '../llm/language-model';
import { z } from 'zod';
import { retrievalSchema, searchResult, searchResultSchema, type DocumentSearch } from './document-search';

/**
 * Answers from the sources only: a LanguageModel's answerQuestion with its context bound, e.g.
 * `(q, sources) => model.answerQuestion(q, sources, ctx)`. The local model's answer is extractive.
 */
export type AnswerFn = (question: string, sources: ModelSource[]) => Promise<string | GroundedAnswer>;

/** HTTP.md's ask response; a search answers it less the routing key, which the route adds (AskResult). */
export const askAnswerSchema = z.object({
  routing_key: z.string().nullable(),
  answer: z.string(),
  answered: z.boolean().describe('false when the sources do not hold the answer'),
  sources: z.array(searchResultSchema).describe('the chunks the answer stands on'),
  retrieval: retrievalSchema,
});
export type AskResult = Omit<z.output<typeof askAnswerSchema>, 'routing_key'>;

export async function askDocuments(
  search: DocumentSearch,
  answer: AnswerFn,
  agentId: number,
  question: string,
  topK: number,
): Promise<AskResult> {
  const found = await search.search(agentId, question, topK);
  const none = { answer: NO_ANSWER, answered: false, sources: [], retrieval: found.retrieval };
  if (found.hits.length === 0) return none;
  const given = await answer(
    question,
    found.hits.map((h) => ({ title: h.title, text: h.content })),
  );
  const grounded: GroundedAnswer =
    typeof given === 'string' ? { answered: given.trim() !== '', text: given.trim(), cited: found.hits.map((_h, i) => i) } : given;
  if (!grounded.answered || !grounded.text || grounded.text === NO_ANSWER) return none;
  const cited = found.hits.filter((_h, i) => grounded.cited.includes(i));
  return { answer: grounded.text, answered: true, sources: cited.map(searchResult), retrieval: found.retrieval };
}
