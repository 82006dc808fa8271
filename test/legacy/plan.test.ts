// The planner alone, over plain rows: grouping, the tokens that granted nothing, whom it leaves
// alone and why, typo mapping, and the property the whole migration rests on: the planned grant
// equals the legacy check for every string and every tool.
import fc from 'fast-check';
import { legacyHasTool, legacyToolkitName, legacyToolSetKey } from '../../src/core/legacy-enabled-tools';
import { planEnabledTools } from './support/plan-enabled-tools';
import { planAgent, type AgentAttachmentRow, type LegacyAgentRow, type LegacyToolkitRow, type PlanOptions } from '../../src/legacy/plan';

const IDS = new Set(['email_analyzer', 'task_creator', 'document_search', 'reply_generator']);
const NO_TOOLKITS = new Map<string, LegacyToolkitRow>();
const BULK: PlanOptions = { registeredIds: IDS, mapTypos: false, toolkits: NO_TOOLKITS, scope: 'bulk' };

const agent = (id: number, enabled_tools: string | null, attachments: AgentAttachmentRow[] = []): LegacyAgentRow => ({
  id,
  name: `Agent ${id}`,
  enabled_tools,
  attachments,
});

const legacyGrant = (ids: string[], extra: Partial<AgentAttachmentRow> = {}): AgentAttachmentRow => ({
  attachment_id: 100,
  toolkit_id: 7,
  toolkit_name: legacyToolkitName(ids),
  origin: 'legacy',
  allow_proactive: false,
  rule_count: 0,
  legacy_tool_set: legacyToolSetKey(ids),
  member_tool_ids: [...ids].sort(),
  ...extra,
});

const toolkitsOf = (...kits: [number, string[]][]): Map<string, LegacyToolkitRow> =>
  new Map(
    kits.map(([id, ids]) => [
      legacyToolSetKey(ids),
      { id, name: legacyToolkitName(ids), legacy_tool_set: legacyToolSetKey(ids), member_tool_ids: ids },
    ]),
  );

describe('when agents are planned', () => {
  test('then agents with the same set of valid ids share one toolkit, whatever their spelling', () => {
    const { report } = planEnabledTools(
      [
        agent(1, 'email_analyzer,task_creator'),
        agent(2, ' task_creator ,email_analyzer,,'),
        agent(3, 'email_analyzer,email_analyzer,task_creator'),
        agent(4, 'document_search'),
      ],
      { registeredIds: IDS, mapTypos: false, toolkits: NO_TOOLKITS },
    );
    expect(report.toolkits.map((t) => [t.name, t.agents])).toEqual([
      ['Legacy: email_analyzer, task_creator', 3],
      ['Legacy: document_search', 1],
    ]);
  });

  test('then each token that is not an exact id is reported with the id it most likely meant, and grants nothing', () => {
    const plan = planAgent(agent(1, 'Email_Analyzer, task-creator, reply generator, docment_search, fax'), BULK);
    expect(plan).toMatchObject({ kind: 'follow', tool_ids: [], attach: false });
    expect(plan.unmatched).toEqual([
      { token: 'Email_Analyzer', suggestion: 'email_analyzer' },
      { token: 'task-creator', suggestion: 'task_creator' },
      { token: 'reply generator', suggestion: 'reply_generator' },
      { token: 'docment_search', suggestion: 'document_search' },
      { token: 'fax', suggestion: null },
    ]);
  });

  test('then with map_typos each suggestion is granted too, and marked as mapped', () => {
    const plan = planAgent(agent(1, 'Email_Analyzer,task_creator,fax'), { ...BULK, mapTypos: true });
    expect(plan).toMatchObject({
      kind: 'follow',
      tool_ids: ['email_analyzer', 'task_creator'],
      mapped_ids: ['email_analyzer'],
      attach: true,
    });
  });

  test('then an empty, null or comma-only string plans no grant at all', () => {
    for (const value of ['', null, ' , ,, '])
      expect(planAgent(agent(1, value), BULK)).toMatchObject({ kind: 'follow', tool_ids: [], attach: false, detach: [] });
  });

  test("then the legacy whitespace is Python's: a byte-order mark is kept (granting nothing), U+001C and U+0085 are stripped", () => {
    expect(planAgent(agent(1, '\ufeffemail_analyzer'), BULK)).toMatchObject({
      tool_ids: [],
      unmatched: [{ token: '\ufeffemail_analyzer', suggestion: 'email_analyzer' }],
    });
    expect(planAgent(agent(1, '\u001cemail_analyzer\u0085'), BULK)).toMatchObject({ tool_ids: ['email_analyzer'] });
    expect(legacyHasTool('\ufeffemail_analyzer', 'email_analyzer')).toBe(false);
    expect(legacyHasTool('\u001cemail_analyzer\u0085', 'email_analyzer')).toBe(true);
  });

  test('then an agent already holding its set is left unchanged, and a changed string swaps the grant', () => {
    const toolkits = toolkitsOf([7, ['email_analyzer']], [8, ['task_creator']]);
    expect(planAgent(agent(1, 'email_analyzer', [legacyGrant(['email_analyzer'])]), { ...BULK, toolkits })).toMatchObject({
      attach: false,
      detach: [],
    });
    expect(planAgent(agent(1, 'task_creator', [legacyGrant(['email_analyzer'])]), { ...BULK, toolkits })).toMatchObject({
      attach: true,
      detach: [100],
      toolkit_id: 8,
    });
    expect(planAgent(agent(1, '', [legacyGrant(['email_analyzer'])]), { ...BULK, toolkits })).toMatchObject({
      attach: false,
      detach: [100],
      tool_ids: [],
    });
  });

  test('then a mapping made earlier is kept by a plain run while the string is unchanged', () => {
    const toolkits = toolkitsOf([7, ['email_analyzer', 'task_creator']]);
    const plan = planAgent(agent(1, 'Email_Analyzer,task_creator', [legacyGrant(['email_analyzer', 'task_creator'])]), {
      ...BULK,
      toolkits,
    });
    expect(plan).toMatchObject({
      kind: 'follow',
      tool_ids: ['email_analyzer', 'task_creator'],
      mapped_ids: ['email_analyzer'],
      attach: false,
      detach: [],
    });
  });
});

describe('when an agent holds grants the migration did not make', () => {
  test('then the bulk migration skips it and says whose grants they are', () => {
    const plan = planAgent(
      agent(1, 'email_analyzer', [legacyGrant(['email_analyzer'], { origin: 'default', toolkit_name: 'Default Tools' })]),
      BULK,
    );
    expect(plan).toEqual(
      expect.objectContaining({
        kind: 'skip',
        reason: 'operator_attachments',
        detail: 'holds grants the migration did not make: Default Tools [default]',
      }),
    );
  });

  test('then a legacy grant an operator gave rules or scheduled runs is skipped as edited', () => {
    expect(planAgent(agent(1, 'task_creator', [legacyGrant(['email_analyzer'], { rule_count: 2 })]), BULK)).toMatchObject({
      kind: 'skip',
      reason: 'edited_legacy_grant',
    });
    expect(planAgent(agent(1, 'task_creator', [legacyGrant(['email_analyzer'], { allow_proactive: true })]), BULK)).toMatchObject({
      kind: 'skip',
      reason: 'edited_legacy_grant',
    });
  });

  test("then an agent whose set's toolkit had its members edited is skipped, never granted the edited members", () => {
    const toolkits = new Map([
      [
        'email_analyzer',
        {
          id: 7,
          name: 'Legacy: email_analyzer',
          legacy_tool_set: 'email_analyzer',
          member_tool_ids: ['email_analyzer', 'document_search'],
        },
      ],
    ]);
    expect(planAgent(agent(1, 'email_analyzer'), { ...BULK, toolkits })).toMatchObject({ kind: 'skip', reason: 'edited_legacy_toolkit' });
  });

  test("then a client writing the string (agent scope) is followed beside the operator's grants", () => {
    const operator = legacyGrant(['document_search'], {
      attachment_id: 5,
      origin: 'operator',
      legacy_tool_set: null,
      toolkit_name: 'Support',
    });
    const plan = planAgent(agent(1, 'task_creator', [operator, legacyGrant(['email_analyzer'])]), { ...BULK, scope: 'agent' });
    expect(plan).toMatchObject({ kind: 'follow', tool_ids: ['task_creator'], attach: true, detach: [100] });
  });
});

describe('when the report is built from many agents', () => {
  test('then its lists are bounded and its counts complete, and a huge token is clipped', () => {
    const rows = Array.from({ length: 50 }, (_, i) => agent(i + 1, `email_analyzer,${'y'.repeat(500)}${i}`));
    const { report } = planEnabledTools(
      rows,
      { registeredIds: IDS, mapTypos: false, toolkits: NO_TOOLKITS },
      { agents_listed: 10, tokens_listed: 5, token_chars: 20 },
    );
    expect(report.unmatched).toHaveLength(10);
    expect(report.left_out).toEqual({ unmatched: 40, unmatched_tokens: 45, skipped: 0 });
    expect(report.agents.with_unmatched_tokens).toBe(50);
    expect(report.unmatched[0]!.token).toBe(`${'y'.repeat(20)}… (501 characters)`);
  });

  test('then a toolkit name for a very large set fits the column and says how many ids it leaves out', () => {
    const ids = Array.from({ length: 20 }, (_, i) => `host_tool_with_a_rather_long_name_${String(i).padStart(2, '0')}`);
    const name = legacyToolkitName(ids, 3);
    // toolkits.name is a varchar(200) (migration 2).
    expect(name.length).toBeLessThanOrEqual(200);
    expect(name).toMatch(/^Legacy: host_tool_with_a_rather_long_name_00, .*… \(\+\d+ more\) \(3\)$/);
  });
});

describe('for any legacy string', () => {
  // Tokens the way real data spells them: ids, their case and hyphen variants, typos, junk, and
  // every kind of whitespace either language treats differently.
  const token = fc.oneof(
    fc.constantFrom(...IDS),
    fc.constantFrom('Email_Analyzer', 'TASK_CREATOR', 'document-search', 'reply generator', 'task_creater', 'fax', ''),
    fc.string({ maxLength: 6 }),
  );
  const space = fc.constantFrom('', ' ', '\t', '\n', '\u00a0', '\u3000', '\u001c', '\u0085', '\ufeff', '\u200b');
  const legacyString = fc
    .array(
      fc.tuple(space, token, space).map(([a, t, b]) => a + t + b),
      { maxLength: 8 },
    )
    .map((parts) => parts.join(','));

  test('then the planned grant equals the legacy check, tool by tool', () => {
    fc.assert(
      fc.property(fc.option(legacyString, { nil: null }), (value) => {
        const plan = planAgent(agent(1, value), BULK);
        if (plan.kind !== 'follow') return false;
        return [...IDS].every((tool) => plan.tool_ids.includes(tool) === legacyHasTool(value, tool));
      }),
      { numRuns: 2000 },
    );
  });

  test('then with map_typos the grant adds only suggestions of tokens that granted nothing', () => {
    fc.assert(
      fc.property(legacyString, (value) => {
        const plan = planAgent(agent(1, value), { ...BULK, mapTypos: true });
        if (plan.kind !== 'follow') return false;
        const suggestions = new Set(plan.unmatched.map((u) => u.suggestion));
        return [...IDS].every((tool) =>
          legacyHasTool(value, tool)
            ? plan.tool_ids.includes(tool)
            : !plan.tool_ids.includes(tool) || (suggestions.has(tool) && plan.mapped_ids.includes(tool)),
        );
      }),
      { numRuns: 1000 },
    );
  });
});
