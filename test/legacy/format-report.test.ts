// The report as an admin reads it in a terminal: invisible characters spelt out, long tokens cut,
// and a dry run saying plainly that nothing changed.
import { formatReport, showToken } from '../../src/legacy/format-report';
import { planEnabledTools } from './support/plan-enabled-tools';

const IDS = new Set(['email_analyzer', 'task_creator']);

describe('when a token is shown', () => {
  test('then a byte-order mark, a tab or a zero-width space is spelt out, and a quote escaped', () => {
    expect(showToken('\ufefftask_creator')).toBe('"\\u{FEFF}task_creator"');
    expect(showToken('a\tb\u200bc "d"')).toBe('"a\\u{9}b\\u{200B}c \\"d\\""');
  });

  test('then a long token is cut, saying how long it was', () => {
    expect(showToken('x'.repeat(100))).toBe(`"${'x'.repeat(40)}"… (100 characters)`);
    expect(showToken(`${'y'.repeat(120)}… (3000 characters)`)).toBe(`"${'y'.repeat(40)}"… (3000 characters)`);
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
