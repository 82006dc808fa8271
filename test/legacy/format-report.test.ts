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
