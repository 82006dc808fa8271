// Revocation holds (issue 5, item 4): runs keep arriving while an admin request takes a grant
// away. A run that started after the revoking request returned is never granted; runs that
// overlap it may go either way. Every answer, grant or refusal, left its tool-call record.
import type { Server } from 'node:http';
import { QueryTypes } from 'sequelize';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';

const RUNS = 200;
/** The revoking request is sent with this run, so runs before it are granted and runs after it overlap. */
const REVOKE_AT = 50;
/** Runs sent once the revocation has returned: they must all be refused. */
const RUNS_AFTER = 20;
const TOOL = 'check_flavor_stock';

let t: TestApp;
let server: Server;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the test server has no address');
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await t.close();
});

function call(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const adminJson = async <T>(method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200): Promise<T> => {
  const res = await call(method, path, ADMIN_TOKEN, body);
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
};

interface Grant {
  agentId: number;
  sender: string;
  /** The admin request that takes the tool away from this sender's runs. */
  revoke(): Promise<Response>;
}

/** An agent whose only grant of the tool is one toolkit, attached on the given rules. */
async function grant(label: string, rules: { kind: 'allow' | 'deny'; pattern: string }[] = []) {
  const toolkit = await adminJson<{ id: number }>('POST', '/api/toolkits', {
    name: `Stock ${label}`,
    member_tool_ids: [TOOL, 'lookup_order'],
  });
  const agent = await adminJson<{ id: number }>('POST', '/api/agents', { name: `Agent ${label}`, toolkit_ids: [] });
  const attachment = await adminJson<{ id: number; rules: { id: number; pattern: string }[] }>('POST', `/api/agents/${agent.id}/toolkits`, {
    toolkit_id: toolkit.id,
    rules,
  });
  return { toolkitId: toolkit.id, agentId: agent.id, attachment };
}

const revocations: [string, () => Promise<Grant>][] = [
  [
    'removing the allow rule that admitted the sender',
    async () => {
      const g = await grant('rule', [
        { kind: 'allow', pattern: 'mara@thescoop.com' },
        { kind: 'allow', pattern: 'boss@thescoop.com' },
      ]);
      const rule = g.attachment.rules.find((r) => r.pattern === 'mara@thescoop.com')!;
      return {
        agentId: g.agentId,
        sender: 'Mara <mara@thescoop.com>',
        revoke: () => call('DELETE', `/api/agents/${g.agentId}/toolkits/${g.attachment.id}/rules/${rule.id}`, ADMIN_TOKEN),
      };
    },
  ],
  [
    'detaching the toolkit from the agent',
    async () => {
      const g = await grant('attachment');
      return {
        agentId: g.agentId,
        sender: 'jane@acme.com',
        revoke: () => call('DELETE', `/api/agents/${g.agentId}/toolkits/${g.attachment.id}`, ADMIN_TOKEN),
      };
    },
  ],
  [
    'removing the tool from the toolkit members',
    async () => {
      const g = await grant('member');
      return {
        agentId: g.agentId,
        sender: 'jane@acme.com',
        revoke: () => call('PATCH', `/api/toolkits/${g.toolkitId}`, ADMIN_TOKEN, { member_tool_ids: ['lookup_order'] }),
      };
    },
  ],
  [
    'deleting the whole toolkit',
    async () => {
      const g = await grant('toolkit');
      return { agentId: g.agentId, sender: 'jane@acme.com', revoke: () => call('DELETE', `/api/toolkits/${g.toolkitId}`, ADMIN_TOKEN) };
    },
  ],
];

interface Observed {
  kind: 'dispatch' | 'explain';
  started: number;
  granted: boolean;
  status: number;
}

/** One run: a dispatch of the tool (200 granted, 403 refused), or the explain view every fifth time. */
async function observe(g: Grant, i: number): Promise<Observed> {
  const started = performance.now();
  if (i % 5 === 4) {
    const res = await call('GET', `/api/agents/${g.agentId}/tools?sender=${encodeURIComponent(g.sender)}`, ADMIN_TOKEN);
    const body = (await res.json()) as { tools?: string[] };
    return { kind: 'explain', started, status: res.status, granted: res.status === 200 && (body.tools ?? []).includes(TOOL) };
  }
  const res = await call('POST', `/api/agents/${g.agentId}/tool-calls`, CLIENT_TOKEN, { tool: TOOL, sender: g.sender });
  await res.arrayBuffer();
  return { kind: 'dispatch', started, status: res.status, granted: res.status === 200 };
}

describe.each(revocations)('when runs are in flight while an admin revokes the grant by %s', (_kind, arrange) => {
  let g: Grant;
  let observed: Observed[];
  let revokeReturned: number;
  let grantedBefore: Observed;

  beforeAll(async () => {
    g = await arrange();
    grantedBefore = await observe(g, 0);
    const runs: Promise<Observed>[] = [];
    let revoking: Promise<void> | undefined;
    for (let i = 0; i < RUNS; i++) {
      if (i === REVOKE_AT) {
        revoking = g.revoke().then(async (res) => {
          revokeReturned = performance.now();
          if (res.status >= 300) throw new Error(`the revocation failed: ${res.status} ${await res.text()}`);
        });
      }
      runs.push(observe(g, i));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await revoking;
    for (let i = 0; i < RUNS_AFTER; i++) runs.push(observe(g, i));
    observed = await Promise.all(runs);
  });

  test('then no run that started after the revocation returned is granted', () => {
    const after = observed.filter((o) => o.started > revokeReturned);
    expect(after.length).toBeGreaterThanOrEqual(RUNS_AFTER);
    expect(after.filter((o) => o.granted)).toEqual([]);
  });

  test('then the sender was granted before, and every dispatch is answered 200 or 403', () => {
    expect(grantedBefore).toMatchObject({ status: 200, granted: true });
    const dispatches = observed.filter((o) => o.kind === 'dispatch');
    expect(dispatches.filter((o) => o.status !== 200 && o.status !== 403)).toEqual([]);
  });

  test('then every grant and every refusal at dispatch left one tool-call record', async () => {
    const rows = await t.sequelize.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM tool_calls WHERE agent_id = :agentId GROUP BY status',
      { replacements: { agentId: g.agentId }, type: QueryTypes.SELECT },
    );
    const recorded = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const dispatches = observed.filter((o) => o.kind === 'dispatch');
    expect(recorded).toEqual({
      success: dispatches.filter((o) => o.status === 200).length + 1, // + the run before
      denied: dispatches.filter((o) => o.status === 403).length,
    });
  });
});
