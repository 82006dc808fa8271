// The four builtin tools as a model calls them in an agent run (and as POST /tool-calls
// dispatches them): each a small zod input and an implementation over the services the legacy
// routes use. The routes keep their own stages; these are the same work, asked for by name.
import { z } from 'zod';
import { DEFAULT_TOP_K, queryTextSchema, topKSchema } from '../documents/schemas';
import { searchResult } from '../documents/document-search';
import type { DocumentStore } from '../documents/document-store';
import { MAX_BODY_CHARS, text } from '../http/schemas';
import { modelContext, type LanguageModel } from '../llm/language-model';
import type { ModelEmail } from '../llm/schemas';
import type { TaskStore } from '../tasks/task-store';
import type { ToolContext, ToolImplementation } from './tool-registry';

export interface BuiltinToolDeps {
  model: LanguageModel;
  documents: DocumentStore;
  tasks: TaskStore;
  now(): Date;
}

/** An email to analyze or answer: the run's own message unless the call names another text. */
const emailInput = z.strictObject({
  from: text(1000).optional(),
  subject: text(2000).optional(),
  body: text(MAX_BODY_CHARS).refine((s) => s.trim() !== '', 'must not be empty'),
});

function emailOf(input: z.infer<typeof emailInput>, context: ToolContext): ModelEmail {
  return { from: input.from ?? context.message?.from ?? context.routing_key ?? '', subject: input.subject ?? context.message?.subject, body: input.body };
}

export function builtinTools(deps: BuiltinToolDeps): ToolImplementation[] {
  const analyze = (input: z.infer<typeof emailInput>, context: ToolContext) => deps.model.analyzeEmail(emailOf(input, context), modelContext(context.agent, deps.now()));
  return [
    {
      id: 'email_analyzer',
      input: emailInput,
      execute(input, context) {
        return analyze(input, context);
      },
    } satisfies ToolImplementation<typeof emailInput>,
    {
      id: 'reply_generator',
      input: emailInput,
      async execute(input, context) {
        const analysis = await analyze(input, context);
        return { text: await deps.model.writeReply(emailOf(input, context), analysis, modelContext(context.agent, deps.now())) };
      },
    } satisfies ToolImplementation<typeof emailInput>,
    {
      id: 'document_search',
      input: z.strictObject({ query: queryTextSchema, top_k: topKSchema.optional() }),
      async execute({ query, top_k }, context) {
        const hits = await deps.documents.search(context.agent_id, query, top_k ?? DEFAULT_TOP_K);
        return { results: hits.map(searchResult) };
      },
    },
    {
      id: 'task_creator',
      input: z.strictObject({ title: text(200).refine((s) => s.trim() !== '', 'must not be empty'), due: text(200).optional() }),
      async execute({ title, due }, context) {
        // Filed against the message at hand, so a retried run files the task once.
        const message = context.message;
        const source = message
          ? { message_id: message.message_id ?? null, from: message.from, subject: message.subject ?? null, body: message.body }
          : { message_id: null, from: context.routing_key ?? '', subject: null, body: title };
        const [task] = await deps.tasks.createTasksFromActionItems(context.agent_id, [{ title, due }], source);
        return task ?? null;
      },
    },
  ];
}
