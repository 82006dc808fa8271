// The report as an admin reads it in a terminal: invisible characters spelt out, long tokens cut,
// and a dry run saying plainly that nothing changed.
import { formatReport } from '../../src/legacy/format-report';
import { planEnabledTools } from './support/plan-enabled-tools';

const IDS = new Set(['email_analyzer', 'task_creator']);

describe('when a report lists a token', () => {
  // Each agent holds one token no tool id matches, so the "By agent" lines show each as formatted.
  const shown = (...tokens: string[]) => {
    const { report } = planEnabledTools(
      tokens.map((token, i) => ({ id: i + 1, name: `Agent ${i + 1}`, enabled_tools: token, attachments: [] })),
      { registeredIds: IDS, mapTypos: false, toolkits: new Map() },
    );
    const lines = formatReport(report).split('\n');
    return tokens.map((_, i) => {
      const line = lines.find((l) => l.startsWith(`    #${i + 1} Agent ${i + 1}: `));
      return line?.slice(`    #${i + 1} Agent ${i + 1}: `.length).replace(/ → .*$/, '');
    });
  };

  test('then a byte-order mark, a tab or a zero-width space is spelt out, and a quote escaped', () => {
    expect(shown('\ufefftask_creator', 'a\tb\u200bc "d"')).toEqual(['"\\u{FEFF}task_creator"', '"a\\u{9}b\\u{200B}c \\"d\\""']);
  });

  test('then a long token is cut, saying how long it was, also when the report has already cut it', () => {
    // The report keeps 120 characters of a token (DEFAULT_REPORT_LIMITS) and says how long it was.
    expect(shown('x'.repeat(100), 'y'.repeat(3000))).toEqual([
      `"${'x'.repeat(40)}"… (100 characters)`,
      `"${'y'.repeat(40)}"… (3000 characters)`,
    ]);
  });
});

describe('when a dry run report is formatted', () => {
  test('then it says nothing changed, and lists the toolkits, the tokens and the skipped agents', () => {
    const { report } = planEnabledTools(
      [
        { id: 1, name: 'Triage', enabled_tools: 'email_analyzer, Task-Creator', attachments: [] },
        {
          id: 2,
          name: 'Managed',
          enabled_tools: null,
          attachments: [
            {
              attachment_id: 9,
              toolkit_id: 3,
              toolkit_name: 'Default Tools',
              origin: 'default',
              allow_proactive: false,
              rule_count: 0,
              legacy_tool_set: null,
              member_tool_ids: [],
            },
          ],
        },
      ],
      { registeredIds: IDS, mapTypos: false, toolkits: new Map() },
    );
    const text = formatReport(report);
    expect(text.split('\n')[0]).toBe('enabled_tools migration, dry run: nothing was changed');
    expect(text).toContain('  create       Legacy: email_analyzer  1 agent');
    expect(text).toContain('    #1 Triage: "Task-Creator" → task_creator');
    expect(text).toContain('  #2 Managed: holds grants the migration did not make: Default Tools [default]');
    expect(text).toContain('Changes: none (dry run). Run with --apply to make them.');
  });
});

describe('when typos are mapped', () => {
  const RUNS = ['sender run with a routing key', 'sender run with no routing key'];
  const mappedReport = (mapTypos: boolean) => {
    const { report } = planEnabledTools(
      [
        { id: 6, name: 'Case variant', enabled_tools: 'Email_Analyzer', attachments: [] },
        { id: 9, name: 'Typo of a tool it holds', enabled_tools: 'task_creator, Task-Creator', attachments: [] },
        { id: 10, name: 'Hyphen', enabled_tools: 'email-analyzer,task_creator', attachments: [] },
        { id: 11, name: 'Plain', enabled_tools: 'task_creator', attachments: [] },
      ],
      { registeredIds: IDS, mapTypos, toolkits: new Map() },
    );
    report.verification = {
      status: 'passed',
      over: 'plan',
      agents_checked: 4,
      tools: [...IDS],
      runs: RUNS,
      mismatch_count: 0,
      mismatches: [],
    };
    return report;
  };

  test('then the report names each agent whose access they change, with the tool it gets and the token it came from', () => {
    const text = formatReport(mappedReport(true));
    expect(text).toContain(
      [
        'Mapped typos would change the access of 2 agents: each would get a tool its legacy string grants nothing for:',
        '  #6 Case variant: email_analyzer (from "Email_Analyzer")',
        '  #10 Hyphen: email_analyzer (from "email-analyzer")',
      ].join('\n'),
    );
  });

  test('then it never says the legacy answer equals the new one: parity is said to be checked against the mapped reading', () => {
    const text = formatReport(mappedReport(true));
    expect(text).not.toContain('the legacy answer equals the new one');
    expect(text).toContain(
      '  4 agents × 2 tools: the new answer checked against the legacy one read with the mapped typos above as the tools they were mapped to (not the plain legacy answer, which they change), for a sender run with a routing key and a sender run with no routing key',
    );
  });

  test('then an applied run says the access changed, and a run without mapping says what it always said', () => {
    const applied = { ...mappedReport(true), mode: 'apply' as const, committed: true };
    expect(formatReport(applied)).toContain('Mapped typos changed the access of 2 agents: each now gets a tool');
    const plain = formatReport(mappedReport(false));
    expect(plain).not.toContain('Mapped typos');
    expect(plain).toContain('  4 agents × 2 tools: the legacy answer equals the new one for a sender run with a routing key');
  });

  test('then a list cut short says how many agents it left out', () => {
    const { report } = planEnabledTools(
      [1, 2, 3].map((id) => ({ id, name: `Agent ${id}`, enabled_tools: 'Email_Analyzer', attachments: [] })),
      { registeredIds: IDS, mapTypos: true, toolkits: new Map() },
      { agents_listed: 1 },
    );
    const lines = formatReport(report).split('\n');
    const at = lines.indexOf(
      'Mapped typos would change the access of 3 agents: each would get a tool its legacy string grants nothing for:',
    );
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '  #1 Agent 1: email_analyzer (from "Email_Analyzer")',
      '  … and 2 more agents (the count above is complete)',
    ]);
  });
});
