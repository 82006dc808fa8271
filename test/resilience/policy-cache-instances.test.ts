// Two instances of the service on one database, each with its own compiled-policy cache. A grant
// revoked on one is refused on the other once the notification arrives; while the other's listening
// connection is gone it reads through and never serves a stale grant; strict mode refuses a revoked
// grant on the next run with no notification at all; and a change by plain SQL invalidates too.
// Every wait is for an event (the notification, the lost or regained LISTEN), never a sleep.
import { once } from 'node:events';
import { withClient } from '../../src/db/database-url';
import { ListenedPolicies, type Invalidation } from '../../src/run/listened-policies';
import { VersionedPolicies } from '../../src/run/versioned-policies';
import { internalsOf, type Toolgate } from '../../src/toolgate';
import { createSecondInstance, createTestApp, type TestApp } from '../support/app';

const TOOL = 'check_flavor_stock';
const MARA = 'Mara <mara@thescoop.com>';

let a: TestApp;
let b: Awaited<ReturnType<typeof createSecondInstance>>;

beforeAll(async () => {
  a = await createTestApp();
  b = await createSecondInstance(a);
});

afterAll(async () => {
  await b?.close();
  await a?.close();
});

function listened(tg: Toolgate): ListenedPolicies {
  const policies = internalsOf(tg).runs.policies;
  if (!(policies instanceof ListenedPolicies)) throw new Error('this instance does not run in listen mode');
  return policies;
}

/** Resolves once the listener holds (now, or when it comes back). */
async function listening(tg: Toolgate): Promise<void> {
  const policies = listened(tg);
  policies.start();
  if (policies.listenerState !== 'listening') await once(policies, 'listening');
}

/** Ends the instance's listening connection from the server side and resolves once it knows. */
async function killListener(policies: ListenedPolicies): Promise<void> {
  const lost = once(policies, 'lost');
  await a.sequelize.query('SELECT pg_terminate_backend(:pid)', { replacements: { pid: policies.listenerPid } });
  await lost;
}

/** Resolves when this instance has dropped the agent on a notification (or dropped everything). */
function invalidationOf(tg: Toolgate, agentId: number): Promise<Invalidation> {
  return new Promise((resolve) => {
    const policies = listened(tg);
    const seen = (i: Invalidation) => {
      if (i.source === 'notification_all' || (i.source === 'notification' && i.agentIds?.includes(agentId))) {
        policies.off('invalidated', seen);
        resolve(i);
      }
    };
    policies.on('invalidated', seen);
  });
}

/**
 * An agent whose one grant of the tool is a toolkit attached on allow rules for Mara and for her
 * boss, made on A: removing Mara's rule revokes her grant (removing the only rule would open the gate).
 */
async function grant(label: string): Promise<{ agentId: number; toolkitId: number; attachmentId: number; ruleId: number }> {
  const kit = await a
    .admin()
    .post('/api/toolkits')
    .send({ name: `Stock ${label}`, member_tool_ids: [TOOL, 'lookup_order'] })
    .expect(201);
  const agent = await a
    .admin()
    .post('/api/agents')
    .send({ name: `Agent ${label}`, toolkit_ids: [] })
    .expect(201);
  const att = await a
    .admin()
    .post(`/api/agents/${agent.body.id}/toolkits`)
    .send({
      toolkit_id: kit.body.id,
      rules: [
        { kind: 'allow', pattern: 'mara@thescoop.com' },
        { kind: 'allow', pattern: 'boss@thescoop.com' },
      ],
    })
    .expect(201);
  const rule = (att.body.rules as { id: number; pattern: string }[]).find((r) => r.pattern === 'mara@thescoop.com');
  return { agentId: agent.body.id, toolkitId: kit.body.id, attachmentId: att.body.id, ruleId: rule!.id };
}

const dispatch = (instance: { client(): { post(url: string): import('supertest').Test } }, agentId: number) =>
  instance.client().post(`/api/agents/${agentId}/tool-calls`).send({ tool: TOOL, sender: MARA });

/**
 * Serves granted runs on B until the next lookup is a cache hit. The grant's own notifications,
 * sent when A committed it, may reach B after the first run and drop what it cached: each such
 * late arrival costs one more round, and there are only a few.
 */
async function warm(tg: Toolgate, agentId: number): Promise<void> {
  for (let round = 0; round < 20; round++) {
    await dispatch(b, agentId).expect(200);
    if ((await internalsOf(tg).runs.policy(agentId)).cache === 'hit') return;
  }
  throw new Error(`B never kept agent ${agentId}'s policy cached`);
}

describe('when a grant is revoked on instance A', () => {
  test('then instance B refuses it once the notification arrives, though B had it cached', async () => {
    await listening(b.tg);
    const g = await grant('cross');
    await warm(b.tg, g.agentId);

    const told = invalidationOf(b.tg, g.agentId);
    await a.admin().delete(`/api/agents/${g.agentId}/toolkits/${g.attachmentId}/rules/${g.ruleId}`).expect(204);
    await told;

    const refused = await dispatch(b, g.agentId).expect(403);
    expect(refused.body.code).toBe('tool_forbidden');
  });

  test('then a toolkit edited on A reaches every agent holding it on B', async () => {
    await listening(b.tg);
    const g1 = await grant('shared-1');
    const agent2 = await a
      .admin()
      .post('/api/agents')
      .send({ name: 'Agent shared-2', toolkit_ids: [g1.toolkitId] })
      .expect(201);
    await b.client().post(`/api/agents/${agent2.body.id}/tool-calls`).send({ tool: TOOL, sender: 'jane@acme.com' }).expect(200);
    // Both agents cached on B: the refusals below must come from dropping them, not from a first read.
    await warm(b.tg, g1.agentId);
    await warm(b.tg, agent2.body.id);

    const told = Promise.all([invalidationOf(b.tg, g1.agentId), invalidationOf(b.tg, agent2.body.id)]);
    await a
      .admin()
      .patch(`/api/toolkits/${g1.toolkitId}`)
      .send({ member_tool_ids: ['lookup_order'] })
      .expect(200);
    await told;

    await dispatch(b, g1.agentId).expect(403);
    await b.client().post(`/api/agents/${agent2.body.id}/tool-calls`).send({ tool: TOOL, sender: 'jane@acme.com' }).expect(403);
  });
});

describe("when instance B's listening connection is killed", () => {
  test('then B reads through while it is gone, serves no stale grant, and starts empty when it is back', async () => {
    await listening(b.tg);
    const policies = listened(b.tg);
    const g = await grant('killed');
    await warm(b.tg, g.agentId);

    await killListener(policies);
    // Right after the loss, before any reconnect can run: the cache is off and empty.
    expect(policies.listenerState).toBe('lost');
    expect(policies.size).toBe(0);
    const during = internalsOf(b.tg).runs.policy(g.agentId);
    expect((await during).cache).toBe('bypass');

    // Revoked by plain SQL while B hears nothing: B must still refuse, whether or not it is back yet.
    await withClient(a.databaseUrl, (c) => c.query('DELETE FROM agent_toolkit_rules WHERE id = $1', [g.ruleId]));
    await dispatch(b, g.agentId).expect(403);

    await listening(b.tg);
    expect(policies.size).toBe(0);
    await dispatch(b, g.agentId).expect(403);
    expect((await internalsOf(b.tg).runs.policy(g.agentId)).cache).toBe('hit');
  });
  test('then a run started from the cache alone (no read, no promise) has no cache to start from while B does not listen', async () => {
    await listening(b.tg);
    const policies = listened(b.tg);
    const g = await grant('cached-start');
    await warm(b.tg, g.agentId);
    const run = { kind: 'sender', routing_key: 'mara@thescoop.com' } as const;
    expect(internalsOf(b.tg).runs.startCached(g.agentId, run)?.offers(TOOL)).toBe(true);

    await killListener(policies);

    expect(internalsOf(b.tg).runs.startCached(g.agentId, run)).toBeUndefined();
  });
});

describe('when a policy is changed by plain SQL from outside any instance', () => {
  test('then B drops the agent on the notification and refuses the revoked grant', async () => {
    await listening(b.tg);
    const g = await grant('plain-sql');
    await warm(b.tg, g.agentId);

    const told = invalidationOf(b.tg, g.agentId);
    await withClient(a.databaseUrl, (c) =>
      c.query("UPDATE toolkits SET member_tool_ids = ARRAY['lookup_order'] WHERE id = $1", [g.toolkitId]),
    );
    await told;

    await dispatch(b, g.agentId).expect(403);
  });

  test('then an access rule added by SQL refuses the sender on B (403 sender_forbidden)', async () => {
    await listening(b.tg);
    const g = await grant('access-sql');
    await warm(b.tg, g.agentId);

    const told = invalidationOf(b.tg, g.agentId);
    await withClient(a.databaseUrl, (c) =>
      c.query("INSERT INTO agent_access_rules (agent_id, kind, pattern) VALUES ($1, 'deny', 'mara@thescoop.com')", [g.agentId]),
    );
    await told;

    const refused = await dispatch(b, g.agentId).expect(403);
    expect(refused.body.code).toBe('sender_forbidden');
  });
});

describe('when both instances run in strict mode', () => {
  let sa: Awaited<ReturnType<typeof createSecondInstance>>;
  let sb: Awaited<ReturnType<typeof createSecondInstance>>;

  beforeAll(async () => {
    sa = await createSecondInstance(a, { policyCache: 'strict' });
    sb = await createSecondInstance(a, { policyCache: 'strict' });
  });
  afterAll(async () => {
    await sa?.close();
    await sb?.close();
  });

  test('then a grant revoked on A is refused by B on its very next run, with no notification at all', async () => {
    expect(internalsOf(sb.tg).runs.policies).toBeInstanceOf(VersionedPolicies);
    const g = await grant('strict');
    await dispatch(sb, g.agentId).expect(200);
    expect((await internalsOf(sb.tg).runs.policy(g.agentId)).cache).toBe('hit');

    await sa.admin().delete(`/api/agents/${g.agentId}/toolkits/${g.attachmentId}/rules/${g.ruleId}`).expect(204);

    await dispatch(sb, g.agentId).expect(403);
    expect((await internalsOf(sb.tg).runs.policy(g.agentId)).cache).toBe('hit');
  });

  test('then a grant revoked by a change too large to count agent by agent (one epoch for all) is refused by B on its next run', async () => {
    const g = await grant('strict-bulk');
    await dispatch(sb, g.agentId).expect(200);
    expect((await internalsOf(sb.tg).runs.policy(g.agentId)).cache).toBe('hit');
    // One statement reaching more than 2000 agents raises the policy epoch, not each agent's version.
    await withClient(a.databaseUrl, async (c) => {
      await c.query("INSERT INTO agents (name) SELECT 'Strict bulk ' || g FROM generate_series(1, 2100) g");
      await c.query("INSERT INTO agent_toolkits (agent_id, toolkit_id) SELECT id, $1 FROM agents WHERE name LIKE 'Strict bulk %'", [
        g.toolkitId,
      ]);
      await c.query(
        `INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern)
           SELECT at.id, 'allow', 'mara@thescoop.com' FROM agent_toolkits at JOIN agents ag ON ag.id = at.agent_id WHERE ag.name LIKE 'Strict bulk %'`,
      );
      const before = await c.query('SELECT epoch FROM policy_epoch');
      const { rowCount } = await c.query(
        `DELETE FROM agent_toolkit_rules WHERE id = $1 OR agent_toolkit_id IN (
           SELECT at.id FROM agent_toolkits at JOIN agents ag ON ag.id = at.agent_id WHERE ag.name LIKE 'Strict bulk %')`,
        [g.ruleId],
      );
      expect(rowCount).toBe(2101);
      expect(Number((await c.query('SELECT epoch FROM policy_epoch')).rows[0].epoch)).toBe(Number(before.rows[0].epoch) + 1);
    });
    await dispatch(sb, g.agentId).expect(403);
  });

  test('then an agent deleted elsewhere is a 404 on B at once, not a cached agent', async () => {
    const g = await grant('strict-deleted');
    await dispatch(sb, g.agentId).expect(200);
    await withClient(a.databaseUrl, (c) => c.query('DELETE FROM agents WHERE id = $1', [g.agentId]));
    await dispatch(sb, g.agentId).expect(404);
  });
});
