// The four builtin tools as a model calls them in an agent run (and as POST /tool-calls
// dispatches them): each a small zod input and an implementation over the services the legacy
// routes use. The routes keep their own stages; these are the same work, asked for by name.
import { z } from 'zod';
import { queryTextSchema, topKSchema } from '../documents/document-input';
import { searchResult } from '../documents/document-search';
import type { BuiltinToolId } from '../core/tool-manifest';
import type { DocumentStore } from '../documents/document-store';
import { emailMessageFields, taskSource } from '../http/email-message';
import { text } from '../http/fields';
import { modelContext, type LanguageModel } from '../llm/language-model';
import type { EmailAnalysis, ModelEmail } from '../llm/email-analysis';
import type { TaskStore } from '../tasks/task-store';
import type { ToolContext, ToolImplementation } from './tool-registry';

export interface BuiltinToolDeps {
  model: LanguageModel;
  documents: DocumentStore;
  tasks: TaskStore;
  now(): Date;
}

/** An email to analyze or answer: the run's own message unless the call names another text. */
const emailInput = emailMessageFields.pick({ from: true, subject: true, body: true }).partial({ from: true });

function emailOf(input: z.infer<typeof emailInput>, context: ToolContext): ModelEmail {
  return {
    from: input.from ?? context.message?.from ?? context.routing_key ?? '',
    subject: input.subject ?? context.message?.subject,
    body: input.body,
  };
}

/** A builtin's implementation; its id is its key in the table below. */
type Implementation<S extends z.ZodType = z.ZodType> = Omit<ToolImplementation<S>, 'id'>;

export function builtinTools(deps: BuiltinToolDeps): ToolImplementation[] {
  // Keyed by the manifest's ids (core/tool-manifest.ts): a builtin without an implementation, or an
  // implementation of no builtin, does not compile.
  const implementations: Record<BuiltinToolId, Implementation> = {
    email_analyzer: {
      input: emailInput,
      execute(input, context) {
        return deps.model.analyzeEmail(emailOf(input, context), modelContext(context.agent, deps.now()));
      },
    } satisfies Implementation<typeof emailInput>,
    reply_generator: {
      input: emailInput,
      async execute(input, context) {
        // A reply stands on the email's analysis, the gate tool's work: asked of the run, so a run
        // not offered email_analyzer gets no analysis through this tool, and the analysis is recorded.
        const analysis = (await context.callTool('email_analyzer', input)) as EmailAnalysis;
        return { text: await deps.model.writeReply(emailOf(input, context), analysis, modelContext(context.agent, deps.now())) };
      },
    } satisfies Implementation<typeof emailInput>,
    document_search: {
      input: z.strictObject({ query: queryTextSchema, top_k: topKSchema }),
      async execute({ query, top_k }, context) {
        const found = await deps.documents.search(context.agent_id, query, top_k);
        return { results: found.hits.map(searchResult), retrieval: found.retrieval };
      },
    },
    task_creator: {
      input: z.strictObject({ title: text(200).refine((s) => s.trim() !== '', 'must not be empty'), due: text(200).optional() }),
      async execute({ title, due }, context) {
        // Filed against the message at hand, so a message handled again files the task once; with
        // no message (a scheduled run), against the run, so tomorrow's run files tomorrow's task.
        const source = context.message
          ? taskSource(context.message)
          : { message_id: null, from: context.routing_key ?? '', subject: null, body: `run ${context.run_key}` };
        const [task] = await deps.tasks.createTasksFromActionItems(context.agent_id, [{ title, due }], source);
        return task ?? null;
      },
    },
  };
  return Object.entries(implementations).map(([id, implementation]) => ({ id, ...implementation }));
}
