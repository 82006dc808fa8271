// Agent runs (SEMANTICS §10): a client's message handled in a thread, a scheduler's instruction
// handled with no thread, and the threads and runs an operator reads back (admin).
import { z } from 'zod';
import { currentRun } from '../middleware/current-run';
import { handleInstruction, handleMessage, runResultSchema } from '../src/agent/handle-message';
import { agentRunViewSchema, threadWithMessagesSchema } from '../src/agent/run-store';
import { threadViewSchema } from '../src/agent/thread-store';
import { emailMessageSchema, inboundMessage } from '../src/http/email-message';
import { normalizeMessageId } from '../src/core/message-ids';
import { NotFoundError } from '../src/errors';
import { idText, text } from '../src/http/fields';
import { linkNextPage, pageQuery } from './paging';
import { parsedBody, routeSection } from './route';
import type { RouteServices } from './route-services';

/** A thread's reference, as an earlier answer gave it (`thr_...`): any other text names no thread (404). */
export const threadReference = z
  .string('thread_id is the thread\'s reference, a string such as "thr_5f0c…" from an earlier answer\'s thread_id')
  .regex(/^[\x21-\x7e]{1,100}$/, 'a thread reference is printable ASCII, such as "thr_5f0c…" from an earlier answer\'s thread_id');

/** A Message-ID in a path, as a relay wrote it (`<...>` percent-encoded, or bare). */
const messageIdParam = z.string().min(1).max(998);

export const messageRunBody = z.strictObject({ thread_id: threadReference.optional(), message: emailMessageSchema });
export const instructionRunBody = z.strictObject({ instruction: text(20_000).refine((s) => s.trim() !== '', 'must not be empty') });
export const agentRunsPageQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50), before: idText.optional() });
/** A page of an agent's threads: at most `limit` (1 to 500, default 50), after the cursor `after`. */
export const threadsQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50), after: pageQuery.after });
export const threadPageQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20), after: idText.optional() });

type AgentRunServices = Pick<RouteServices, 'agentRuns' | 'agents' | 'toolRun'>;

export const agentRunsRoutes = routeSection<AgentRunServices>('Agent runs', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/messages',
    summary: 'Handle a message with the agent',
    description:
      "An agent run (SEMANTICS §10): resolved once for the message's sender, the model offered exactly the run's tools, every call through dispatch. A tool not offered is refused, recorded and given back to the model. The thread is named by thread_id (its reference) or found by in_reply_to / references; a sender who is not one of its participants, or has no routing key, starts a new thread with no history (new_thread says so). A thread_id that names no thread of this agent is a 404. Without either, a new thread starts.",
    roles: ['client'],
    body: messageRunBody,
    success: {
      status: 200,
      description:
        'The run: what it was offered, its steps in order, the reply with its Message-ID and addressees, and why it stopped. A redelivered message (the same message_id, sender and content) gets the first answer again, with the header Idempotent-Replayed: true, and runs nothing',
      schema: runResultSchema,
    },
    errors: ['sender_forbidden', 'message_id_reused', 'message_id_in_flight'],
    idempotent: true,
    // The sender is the message's From, authenticated by the message's own headers.
    use: (tg) => [
      tg.toolRun({
        runOf: (req) => {
          const { message } = parsedBody(req, messageRunBody);
          return { kind: 'sender', sender: message.from, authentication_results: message.authentication_results };
        },
      }),
    ],
    handle: async (tg, { req, res, body }) => {
      const handled = await handleMessage(tg.agentRuns, currentRun(req), {
        thread_id: body.thread_id,
        message: inboundMessage(body.message),
      });
      // A redelivered message gets its first handling's answer, as a replayed Idempotency-Key does.
      if (handled.replayed) res.set('Idempotent-Replayed', 'true');
      return handled.answer;
    },
  }),
  route({
    method: 'post',
    path: '/agents/:id/runs',
    summary: 'Run a scheduled instruction',
    description: 'A scheduled run: no sender and no thread; only attachments allowed on scheduled runs are drawn on.',
    roles: ['scheduler'],
    body: instructionRunBody,
    success: { status: 200, description: 'The run', schema: runResultSchema },
    idempotent: true,
    use: (tg) => [tg.toolRun({ runOf: () => ({ kind: 'scheduled' }) })],
    handle: (tg, { req, body }) => handleInstruction(tg.agentRuns, currentRun(req), body.instruction),
  }),
  route({
    method: 'get',
    path: '/agents/:id/threads',
    summary: "An agent's threads, a page at a time",
    description:
      'Newest activity first, then the newest thread; at most `limit` (default 50). When more follow, the `Toolgate-Next-Cursor` header holds the cursor to pass as `after`, and `Link` (rel="next") the next page; a cursor this list did not give is a 422 `validation_error` of type `invalid_cursor`. A thread that gets a new run while the pages are read moves to the top: it is not shown twice, and a first page shows it again.',
    roles: ['admin'],
    query: threadsQuery,
    success: { status: 200, description: 'A page of the threads', schema: z.array(threadViewSchema) },
    handle: async (tg, { req, res, ids, query }) => {
      await tg.agents.get(ids.id);
      const page = await tg.agentRuns.store.threads.list(ids.id, query);
      linkNextPage(req, res, page.next, { limit: query.limit });
      return page.threads;
    },
  }),
  route({
    method: 'delete',
    path: '/agents/:id/message-ids/:messageId',
    params: { messageId: messageIdParam },
    summary: "Release a message's Message-ID",
    description:
      "Lets the Message-ID an inbound message's run claimed go, so the message that truly bears it is handled when it comes (for example one a stranger sent first under a real message's id, which makes the real one a 422 message_id_reused). The run and its thread stay as they were. Percent-encode the id, brackets included: `%3Cjane-1%40acme.com%3E`. A claim made by a run with no routing key never blocks a sender with one, so it needs no release.",
    roles: ['admin'],
    success: { status: 204, description: 'Released: a message bearing the id is handled anew' },
    handle: async (tg, { ids, params }) => {
      await tg.agents.get(ids.id);
      const id = normalizeMessageId(params.messageId);
      if (id === null || (await tg.agentRuns.store.releaseMessageId(ids.id, id)) === null) {
        throw new NotFoundError(
          `A Message-ID ${JSON.stringify(String(params.messageId).slice(0, 100))} claimed by an inbound message of agent ${ids.id}`,
        );
      }
    },
  }),
  route({
    method: 'get',
    path: '/agents/:id/threads/:threadId',
    params: { threadId: threadReference },
    summary: 'A thread and a page of its messages',
    description:
      'At most `limit` messages after `after`, oldest first, and fewer once the page holds about a million characters; `next_after` reads on.',
    roles: ['admin'],
    query: threadPageQuery,
    success: {
      status: 200,
      description: 'The thread, its participants, a page of its messages oldest first (each with its run), and where the next page starts',
      schema: threadWithMessagesSchema,
    },
    // A thread is read in pages: at most `limit` messages, and fewer once a page holds about a
    // million characters, so a thread of huge messages never makes one huge answer.
    handle: async (tg, { ids, params, query }) => {
      const { row_id, ...thread } = await tg.agentRuns.store.threads.thread(ids.id, params.threadId as string);
      return { ...thread, ...(await tg.agentRuns.store.threadPage(row_id, { after: query.after ?? 0, limit: query.limit })) };
    },
  }),
  route({
    method: 'get',
    path: '/agents/:id/runs',
    summary: "An agent's runs",
    description:
      'Newest first, scheduled runs included, in pages: at most `limit`, fewer once a page holds about a million characters; the Link header names the next page.',
    roles: ['admin'],
    query: agentRunsPageQuery,
    success: { status: 200, description: 'The runs', schema: z.array(agentRunViewSchema) },
    handle: async (tg, { req, res, ids, query }) => {
      await tg.agents.get(ids.id);
      const page = await tg.agentRuns.store.runs(ids.id, { before: query.before ?? null, limit: query.limit });
      if (page.next_before !== null)
        res.links({ next: `${req.baseUrl}/agents/${ids.id}/runs?limit=${query.limit}&before=${page.next_before}` });
      return page.runs;
    },
  }),
]);
