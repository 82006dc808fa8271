// The language model behind analysis, replies, answers and chat: the interface, its two
// implementations, and the factory that picks one from the environment.
//
//   const model = createLanguageModel(process.env);   // LocalModel unless TOOLGATE_MODEL_PROVIDER=openai
//   const analysis = await model.analyzeEmail(email, { agentName: 'Sundae', systemPrompt: null, now: new Date() });
export { ModelError, NO_ANSWER, isModelError, modelContext, orUpstreamError, toUpstreamError } from './language-model';
export type { LanguageModel, ModelContext, ModelErrorKind, ModelSource } from './language-model';
export { LocalModel } from './local-model';
export { OpenAIModel, type OpenAIModelOptions } from './openai-model';
export { DEFAULT_MODEL_NAME, createLanguageModel } from './select-model';
export {
  actionItemSchema,
  emailAnalysisSchema,
  emailCategorySchema,
  prioritySchema,
  sentimentSchema,
  type ActionItem,
  type EmailAnalysis,
  type EmailCategory,
  type ModelEmail,
  type Priority,
  type Sentiment,
} from './schemas';
