// For each POST, PUT and PATCH route of the API, a path and a body it accepts: the fuzz and event-loop
// tests feed every route from this one table, and each checks that no declared route is missing.
// And for each route that reads a query string, a path and a query it accepts, which the
// event-loop test feeds hostile values of.
import { API_ROUTES } from '../../routes/api-routes';

/** The rows the examples name: an agent (with its Finance attachment), a toolkit, a pending request. */
export interface ExampleIds {
  sundae: { id: number; finance: number };
  toolkit: number;
  request: number;
}

/** Every route that takes a body. */
export const BODY_ROUTES = API_ROUTES.flatMap((g) => g.section.routes).filter(
  (r) => r.method === 'post' || r.method === 'put' || r.method === 'patch',
);

export const routeKey = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

export const EXAMPLE_MESSAGE = {
  from: 'Jane <jane@acme.com>',
  to: ['support@thescoop.com'],
  cc: 'omar@example.org',
  reply_to: 'jane@acme.com',
  subject: 'Melted',
  body: 'Order SCP-1042 arrived melted.',
  message_id: '<m@acme.com>',
  in_reply_to: '<x@acme.com>',
  references: '<a@b> <c@d>',
  authentication_results: ['mx.thescoop.com; dmarc=pass header.from=acme.com'],
};

/** For each route that takes a body: a path to call and a body it accepts. */
/** `ids` is read when an example is made, so it may be filled in after this is called (in beforeAll). */
export function routeExamples(ids: ExampleIds): Record<string, () => { path: string; body: unknown }> {
  const message = EXAMPLE_MESSAGE;
  return {
    'post /toolkits': () => ({
      path: '/api/toolkits',
      body: { name: 'Fuzzed kit', description: 'A kit.', member_tool_ids: ['lookup_order', 'check_flavor_stock'] },
    }),
    'patch /toolkits/:toolkitId': () => ({
      path: `/api/toolkits/${ids.toolkit}`,
      body: { name: 'Fuzz', description: 'Changed.', member_tool_ids: ['lookup_order'] },
    }),
    'post /agents': () => ({
      path: '/api/agents',
      body: {
        name: 'Fuzzed',
        description: 'An agent.',
        system_prompt: 'Be brief.',
        enabled_tools: 'email_analyzer, task_creator',
        escalation_address: 'mara@thescoop.com',
      },
    }),
    'patch /agents/:id': () => ({
      path: `/api/agents/${ids.sundae.id}`,
      body: { name: 'Sundae', description: 'Support.', system_prompt: 'Be kind.', escalation_address: 'mara@thescoop.com' },
    }),
    'post /agents/:id/toolkits': () => ({
      path: `/api/agents/${ids.sundae.id}/toolkits`,
      body: {
        toolkit_id: ids.toolkit,
        rules: [{ kind: 'allow', pattern: '*@thescoop.com' }],
        approval: { approvers: ['mara@thescoop.com'] },
      },
    }),
    'patch /agents/:id/toolkits/:attachmentId': () => ({
      path: `/api/agents/${ids.sundae.id}/toolkits/${ids.sundae.finance}`,
      body: { rules: [{ kind: 'deny', pattern: 'x@acme.com' }], approval: { approvers: ['*@thescoop.com'] } },
    }),
    'put /agents/:id/toolkits/:attachmentId/candidate': () => ({
      path: `/api/agents/${ids.sundae.id}/toolkits/${ids.sundae.finance}/candidate`,
      body: {
        rules: [{ kind: 'deny', pattern: '*@acme.com' }],
        approval: { approvers: ['mara@thescoop.com'] },
        caps: [{ tool_id: 'process_refund', per: 'sender', limit: 3, window: '1d' }],
      },
    }),
    'post /agents/:id/toolkits/:attachmentId/candidate/promote': () => ({
      path: `/api/agents/${ids.sundae.id}/toolkits/${ids.sundae.finance}/candidate/promote`,
      body: { note: 'promote' },
    }),
    'post /agents/:id/toolkits/:attachmentId/rules': () => ({
      path: `/api/agents/${ids.sundae.id}/toolkits/${ids.sundae.finance}/rules`,
      body: { kind: 'deny', pattern: 'spam@acme.com' },
    }),
    'post /agents/:id/access-rules': () => ({
      path: `/api/agents/${ids.sundae.id}/access-rules`,
      body: { kind: 'deny', pattern: 'spam@acme.com' },
    }),
    'post /policy/preview': () => ({
      path: '/api/policy/preview',
      body: {
        change: { update: { attachment_id: ids.sundae.finance, rules: [], caps: [{ per: 'sender', limit: 1, window: '1d' }] } },
        window: '1d',
      },
    }),
    'post /agents/:id/tool-calls': () => ({
      path: `/api/agents/${ids.sundae.id}/tool-calls`,
      body: { tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com', authentication_results: ['mx; spf=pass'] },
    }),
    'post /agents/:id/mcp-sessions': () => ({ path: `/api/agents/${ids.sundae.id}/mcp-sessions`, body: { message } }),
    'post /agents/:id/messages': () => ({
      path: `/api/agents/${ids.sundae.id}/messages`,
      body: { thread_id: 'thr_00000000000000000000000000000000', message },
    }),
    'post /agents/:id/runs': () => ({ path: `/api/agents/${ids.sundae.id}/runs`, body: { instruction: 'Check the stock.' } }),
    'post /agents/:id/approval-requests/:requestId/approve': () => ({
      path: `/api/agents/${ids.sundae.id}/approval-requests/${ids.request}/approve`,
      body: { note: 'ok' },
    }),
    'post /agents/:id/approval-requests/:requestId/deny': () => ({
      path: `/api/agents/${ids.sundae.id}/approval-requests/${ids.request}/deny`,
      body: { note: 'no' },
    }),
    'post /agents/:id/email/analyze': () => ({ path: `/api/agents/${ids.sundae.id}/email/analyze`, body: message }),
    'post /agents/:id/workflows/email': () => ({ path: `/api/agents/${ids.sundae.id}/workflows/email`, body: message }),
    'post /agents/:id/documents': () => ({
      path: `/api/agents/${ids.sundae.id}/documents`,
      body: { title: 'Refunds', content: 'Refunds are issued within 14 days.' },
    }),
    'post /agents/:id/documents/search': () => ({
      path: `/api/agents/${ids.sundae.id}/documents/search`,
      body: { query: 'refund', top_k: 3, sender: 'jane@acme.com' },
    }),
    'post /agents/:id/documents/ask': () => ({
      path: `/api/agents/${ids.sundae.id}/documents/ask`,
      body: { question: 'When are refunds issued?', sender: 'jane@acme.com' },
    }),
    'post /agents/:id/chat': () => ({ path: `/api/agents/${ids.sundae.id}/chat`, body: { message: 'Hello', sender: 'jane@acme.com' } }),
    // Its schema holds no string: the one here is refused as unknown, and must still be no 5xx.
    'post /migrations/enabled-tools': () => ({
      path: '/api/migrations/enabled-tools',
      body: { dry_run: true, map_typos: false, note: 'x' },
    }),
    'post /toolkits/sync': () => ({ path: '/api/toolkits/sync', body: { note: 'sync' } }),
    'post /embeddings/reindex': () => ({ path: '/api/embeddings/reindex', body: { note: 'reindex' } }),
    // No MCP server is configured in the tests that use this table: each answers a 404 or a 422, never a 5xx.
    'post /mcp/servers/:name/refresh': () => ({ path: '/api/mcp/servers/files/refresh', body: { note: 'refresh' } }),
    'post /mcp/tools/:id/accept': () => ({ path: '/api/mcp/tools/files__read_text_file/accept', body: { note: 'accept' } }),
  };
}

/** Every route that reads a query string. */
export const QUERY_ROUTES = API_ROUTES.flatMap((g) => g.section.routes).filter((r) => r.query !== undefined);

/**
 * For each route that reads a query string: a path and a query it accepts, each parameter given,
 * so the event-loop test can put a hostile value in each. A thread id that names no thread is a 404
 * after its query was read, which is all the test needs of it.
 */
export function queryExamples(ids: ExampleIds): Record<string, () => { path: string; query: Record<string, string> }> {
  const agent = () => `/api/agents/${ids.sundae.id}`;
  return {
    'get /agents': () => ({ path: '/api/agents', query: { limit: '10', name: 'sun', after: 'WyJzY291dCIsMl0' } }),
    'get /agents/:id/tools': () => ({ path: `${agent()}/tools`, query: { sender: 'jane@acme.com' } }),
    'get /agents/:id/threads': () => ({ path: `${agent()}/threads`, query: { limit: '10' } }),
    'get /agents/:id/threads/:threadId': () => ({ path: `${agent()}/threads/1`, query: { limit: '10', after: '1' } }),
    'get /agents/:id/runs': () => ({ path: `${agent()}/runs`, query: { limit: '10', before: '1' } }),
    'get /agents/:id/approval-requests': () => ({
      path: `${agent()}/approval-requests`,
      query: { status: 'pending', limit: '10', after: 'WzVd' },
    }),
    'get /agents/:id/tool-calls': () => ({ path: `${agent()}/tool-calls`, query: { limit: '10', status: 'denied', after: 'WzVd' } }),
    // The start of the decision log, as a read with no cursor gives it back.
    'get /decisions': () => ({ path: '/api/decisions', query: { after: 'djE6MDow', limit: '10' } }),
  };
}
