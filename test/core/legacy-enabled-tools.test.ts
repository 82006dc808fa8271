// The legacy check, bug for bug, and its reading for migration: which ids a string grants, and
// which tokens granted nothing with what they most likely meant.
import { closestToolId } from '../../src/core/closest-tool';
import { legacyHasTool, legacyToolkitName, mappedToolIds, readEnabledTools } from '../../src/core/legacy-enabled-tools';

const IDS = new Set(['email_analyzer', 'task_creator', 'document_search', 'reply_generator']);

describe('when the legacy check reads enabled_tools', () => {
  test.each([
    ['email_analyzer,task_creator', 'task_creator', true],
    ['email_analyzer, task_creator', 'task_creator', true],
    [' email_analyzer ,,', 'email_analyzer', true],
    ['Email_Analyzer', 'email_analyzer', false],
    ['email-analyzer', 'email_analyzer', false],
    ['', 'email_analyzer', false],
    [null, 'email_analyzer', false],
    ['email_analyzer;task_creator', 'task_creator', false],
  ])('then %j grants %s: %s', (value, tool, expected) => {
    expect(legacyHasTool(value, tool)).toBe(expected);
  });
});

describe('when a string is read for migration', () => {
  test('then valid ids are sorted and deduplicated, and the rest reported with a suggestion', () => {
    const reading = readEnabledTools('task_creator, Email-Analyzer,task_creator,,docment_search, fax', IDS);
    expect(reading.tool_ids).toEqual(['task_creator']);
    expect(reading.unmatched).toEqual([
      { token: 'Email-Analyzer', suggestion: 'email_analyzer' },
      { token: 'docment_search', suggestion: 'document_search' },
      { token: 'fax', suggestion: null },
    ]);
    expect(mappedToolIds(reading)).toEqual(['document_search', 'email_analyzer', 'task_creator']);
  });

  test('then the toolkit name says the set it stands for', () => {
    expect(legacyToolkitName(['task_creator', 'email_analyzer'])).toBe('Legacy: email_analyzer, task_creator');
  });
});

describe('when a mistyped tool id is looked up', () => {
  test.each([
    ['EMAIL_ANALYZER', 'email_analyzer'],
    ['reply generator', 'reply_generator'],
    ['task_creater', 'task_creator'],
    ['document_serach', 'document_search'],
    ['calendar', null],
    ['', null],
  ])('then %j most likely meant %j', (token, expected) => {
    expect(closestToolId(token, IDS)).toBe(expected);
  });
});
