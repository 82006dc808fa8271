// Due dates: what chrono-node reads, plus the business shorthand it does not, always as the UTC
// calendar day relative to the reference instant, and never in the past.
import { dueDate } from '../../src/llm/local/due-date';

const WEDNESDAY = new Date('2025-03-05T10:00:00Z');
const SATURDAY = new Date('2025-03-08T10:00:00Z');

describe('dueDate', () => {
  test.each([
    ['a weekday', 'Please process it by Friday.', WEDNESDAY, '2025-03-07'],
    ['a weekday and a time', 'Could we meet next Tuesday at 3pm?', WEDNESDAY, '2025-03-11'],
    ['a month and day', 'Please RSVP by March 20.', WEDNESDAY, '2025-03-20'],
    ['a month and day already past this year', 'Send it on March 3.', WEDNESDAY, '2026-03-03'],
    ['tomorrow', 'Call me tomorrow morning.', WEDNESDAY, '2025-03-06'],
    ['a count of days from now', 'Reply within 2 days.', WEDNESDAY, '2025-03-07'],
    ['end of day', 'Send me the logs by EOD.', WEDNESDAY, '2025-03-05'],
    ['close of business', 'Confirm by close of business.', WEDNESDAY, '2025-03-05'],
    ['end of the week', 'Send a quote by end of the week.', WEDNESDAY, '2025-03-07'],
    ['end of the week, from a Saturday', 'Send a quote by end of the week.', SATURDAY, '2025-03-14'],
    ['end of the month', 'Pay the balance by end of the month.', WEDNESDAY, '2025-03-31'],
  ])('when a sentence names %s, then it is due on that day', (_what, sentence, reference, expected) => {
    expect(dueDate(sentence, reference)).toBe(expected);
  });

  test.each([
    ['a span of time', 'Would you have 15 minutes next week for a demo?'],
    ['a time of day only', 'Call me at 3pm.'],
    ['no date at all', 'Please reset my password.'],
    ['an order number', 'Refund order SCP-1042 please.'],
  ])('when a sentence names %s, then it has no due date', (_what, sentence) => {
    expect(dueDate(sentence, WEDNESDAY)).toBeUndefined();
  });

  test('when the reference is late in the UTC day, then "tomorrow" is the next UTC calendar day', () => {
    expect(dueDate('Send it tomorrow.', new Date('2025-03-06T23:30:00Z'))).toBe('2025-03-07');
  });
});
