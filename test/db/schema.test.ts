// What the database itself enforces, whatever the application does: unique names regardless of
// case, one attachment per pair, unique rules, rule kinds, tool-call statuses, cascades.
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadAgentPolicy } from '../../src/services/policy-loader';
import { createTestDatabase } from '../support/database';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sequelize;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sequelize;
});
afterAll(() => db.drop());

/** The name of the constraint a statement broke (Sequelize wraps it as "Validation error"). */
const violated = async (statement: Promise<unknown>): Promise<string> => {
  try {
    await statement;
  } catch (err) {
    const parent = (err as { parent?: { constraint?: string } }).parent;
    return parent?.constraint ?? String(err);
  }
  throw new Error('the statement was accepted');
};

const one = async <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  (await sql.query<T>(query, { replacements, type: QueryTypes.SELECT }))[0];

describe('when rows break an invariant', () => {
  test('then a toolkit name that differs only in case is refused', async () => {
    await sql.query("INSERT INTO toolkits (name) VALUES ('Finance')");
    expect(await violated(sql.query("INSERT INTO toolkits (name) VALUES ('FINANCE')"))).toBe('toolkits_name_lower_key');
  });

  test('then a second attachment of the same toolkit to the same agent is refused', async () => {
    const agent = await one<{ id: number }>("INSERT INTO agents (name) VALUES ('A') RETURNING id");
    const kit = await one<{ id: number }>("INSERT INTO toolkits (name) VALUES ('Pair') RETURNING id");
    await sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a, :k)', { replacements: { a: agent.id, k: kit.id } });
    expect(
      await violated(
        sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a, :k)', { replacements: { a: agent.id, k: kit.id } }),
      ),
    ).toBe('agent_toolkits_agent_id_toolkit_id_key');
  });

  test('then a duplicate rule and an unknown rule kind are refused', async () => {
    const att = await one<{ id: number }>('SELECT id FROM agent_toolkits LIMIT 1');
    await sql.query("INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:id, 'allow', '*@x.com')", {
      replacements: { id: att.id },
    });
    expect(
      await violated(
        sql.query("INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:id, 'allow', '*@x.com')", {
          replacements: { id: att.id },
        }),
      ),
    ).toBe('agent_toolkit_rules_attachment_kind_pattern_key');
    expect(
      await violated(
        sql.query("INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:id, 'maybe', 'a@x.com')", {
          replacements: { id: att.id },
        }),
      ),
    ).toBe('agent_toolkit_rules_kind_check');
  });

  test('then an unknown tool-call status or run kind is refused', async () => {
    const agent = await one<{ id: number }>('SELECT id FROM agents LIMIT 1');
    expect(
      await violated(
        sql.query("INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run) VALUES (:a, 'x', 'x', 'granted', 'sender')", {
          replacements: { a: agent.id },
        }),
      ),
    ).toBe('tool_calls_status_check');
    expect(
      await violated(
        sql.query("INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run) VALUES (:a, 'x', 'x', 'success', 'thread')", {
          replacements: { a: agent.id },
        }),
      ),
    ).toBe('tool_calls_run_check');
  });

  test('then an attachment to a missing agent is refused', async () => {
    const kit = await one<{ id: number }>("SELECT id FROM toolkits WHERE name = 'Pair'");
    expect(
      await violated(sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (987654, :k)', { replacements: { k: kit.id } })),
    ).toBe('agent_toolkits_agent_id_fkey');
  });
});

describe('when the policy loader reads an agent', () => {
  test('then it issues exactly one query and returns the agent, its access rules, and its attachments with their rules in order', async () => {
    const agent = await one<{ id: number }>("INSERT INTO agents (name) VALUES ('Loaded') RETURNING id");
    const k1 = await one<{ id: number }>(
      "INSERT INTO toolkits (name, member_tool_ids) VALUES ('L1', ARRAY['a','b']::varchar(64)[]) RETURNING id",
    );
    const k2 = await one<{ id: number }>(
      "INSERT INTO toolkits (name, member_tool_ids) VALUES ('L2', ARRAY['c']::varchar(64)[]) RETURNING id",
    );
    const a1 = await one<{ id: number }>('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a, :k) RETURNING id', {
      a: agent.id,
      k: k1.id,
    });
    await sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id, allow_proactive) VALUES (:a, :k, true)', {
      replacements: { a: agent.id, k: k2.id },
    });
    await sql.query(
      "INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:id, 'deny', 'x@y.com'), (:id, 'allow', '*@y.com')",
      { replacements: { id: a1.id } },
    );
    await sql.query("INSERT INTO agent_access_rules (agent_id, kind, pattern) VALUES (:a, 'allow', '*@y.com'), (:a, 'deny', 'z@y.com')", {
      replacements: { a: agent.id },
    });

    const statements: unknown[] = [];
    sql.addHook('beforeQuery', 'count', (_options, query) => {
      statements.push(query);
    });
    try {
      const loaded = await loadAgentPolicy(sql, agent.id);
      expect(statements).toHaveLength(1);
      expect(loaded?.agent).toEqual({ id: agent.id, name: 'Loaded', system_prompt: null, escalation_address: null });
      expect(loaded?.policy).toEqual({
        agent_id: agent.id,
        access_rules: [
          { id: expect.any(Number), kind: 'allow', pattern: '*@y.com' },
          { id: expect.any(Number), kind: 'deny', pattern: 'z@y.com' },
        ],
        attachments: [
          {
            attachment_id: a1.id,
            toolkit_id: k1.id,
            toolkit_name: 'L1',
            allow_proactive: false,
            member_tool_ids: ['a', 'b'],
            approvers: null,
            caps: [],
            rules: [
              { id: expect.any(Number), kind: 'deny', pattern: 'x@y.com' },
              { id: expect.any(Number), kind: 'allow', pattern: '*@y.com' },
            ],
          },
          {
            attachment_id: expect.any(Number),
            toolkit_id: k2.id,
            toolkit_name: 'L2',
            allow_proactive: true,
            member_tool_ids: ['c'],
            rules: [],
            approvers: null,
            caps: [],
          },
        ],
      });
    } finally {
      sql.removeHook('beforeQuery', 'count');
    }
  });

  test('then an agent with no attachments has an empty policy, and a missing agent none', async () => {
    const agent = await one<{ id: number }>("INSERT INTO agents (name) VALUES ('Bare') RETURNING id");
    expect((await loadAgentPolicy(sql, agent.id))?.policy).toEqual({ agent_id: agent.id, access_rules: [], attachments: [] });
    expect(await loadAgentPolicy(sql, 2000000000)).toBeNull();
  });
});
