// What an approver's own text decides (SEMANTICS §12a): a code with approve or deny decides that
// request; a plain approval or refusal only the one request this sender may decide, and only when
// nothing hedges, asks or negates it; anything else decides nothing.
import fc from 'fast-check';
import { readDecision } from '../../src/core/approval-decision';
import { newDecisionCode } from '../../src/core/decision-code';

const ONE = [{ id: 7, code: 'K7QXM2PD', input: '{"order_id":"SCP-1042"}' }];
const TWO = [...ONE, { id: 8, code: '9TRW4HJA', input: '{"order_id":"SCP-1050"}' }];

describe("when exactly one request is this sender's to decide", () => {
  test.each([
    ['Approved, process it.', 'approve'],
    ['Approved — process it.', 'approve'],
    ['Yes, approved. Thanks!', 'approve'],
    ['OK, go ahead.', 'approve'],
    ['Please go ahead and refund it.', 'approve'],
    ['I approve.', 'approve'],
    ['Approved, process the refund for SCP-1042.', 'approve'],
    ['No, don’t refund it.', 'deny'],
    ['Not approved.', 'deny'],
    ['Denied, sorry.', 'deny'],
    ['Do not process it.', 'deny'],
  ])('then the plain %j decides it: %s', (text, decision) => {
    expect(readDecision(text, ONE)).toEqual({ kind: 'decides', decisions: [{ request_id: 7, decision }] });
  });

  test.each([
    ['Let me check with the courier first, I will get back to you.', 'hedged'],
    ['Not yet.', 'no_decision'],
    ['Approved? Ask the courier.', 'hedged'],
    ['Approved, but only half of it.', 'hedged'],
    ['Approved if the courier confirms.', 'hedged'],
    ['The courier approved the return.', 'no_decision'],
    ['I don’t approve.', 'no_decision'],
    ['Approved. No, wait.', 'hedged'],
    ['Approved: the courier refused the return, so please process it.', 'mixed'],
    ['Approved, refund SCP-1050.', 'other_request'],
    ['Thanks for the heads-up.', 'no_decision'],
    ['', 'no_decision'],
  ])('then %j decides nothing (%s)', (text, reason) => {
    expect(readDecision(text, ONE)).toEqual({ kind: 'none', reason });
  });
});

describe("when several requests are this sender's to decide", () => {
  test('then a plain approval decides none of them', () => {
    expect(readDecision('Approved.', TWO)).toEqual({ kind: 'none', reason: 'several_pending' });
  });

  test('then each code with approve or deny decides exactly its request, in any case', () => {
    expect(readDecision('approve k7qxm2pd. Deny 9TRW4HJA.', TWO)).toEqual({
      kind: 'decides',
      decisions: [
        { request_id: 7, decision: 'approve' },
        { request_id: 8, decision: 'deny' },
      ],
    });
  });

  test.each([
    ['Don’t approve K7QXM2PD.', 'negated'],
    ['Approve K7QXM2PD once the courier confirms.', 'hedged'],
    ['Approve K7QXM2PD? Not sure.', 'hedged'],
    ['approve K7QXM2PD deny K7QXM2PD', 'conflicting_codes'],
    ['approve ZZZZ9999', 'unknown_code'],
  ])('then %j decides nothing (%s)', (text, reason) => {
    expect(readDecision(text, TWO)).toEqual({ kind: 'none', reason });
  });
});

test('when no request is pending, then even a plain approval decides nothing', () => {
  expect(readDecision('Approved.', [])).toEqual({ kind: 'none', reason: 'nothing_pending' });
});

test('when a text names no code, then a word that looks like one ("approve tomorrow") is not read as one', () => {
  expect(readDecision('Approve tomorrow.', ONE)).toEqual({ kind: 'none', reason: 'hedged' });
});

test('when codes are made, then each is 8 characters of the alphabet, with a digit, and none repeats in 2,000', () => {
  const codes = Array.from({ length: 2000 }, newDecisionCode);
  for (const code of codes) expect(code).toMatch(/^(?=.*\d)(?=.*[A-Z])[0-9ABCDEFGHJKMNPQRSTVWXYZ]{8}$/);
  expect(new Set(codes).size).toBe(codes.length);
});

test('when a text is random, then reading it never decides a request whose code it does not hold unless it is a plain decision', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      const reading = readDecision(text, TWO);
      if (reading.kind === 'none') return true;
      const lower = text.toLowerCase();
      return reading.decisions.every((d) => lower.includes(TWO.find((r) => r.id === d.request_id)!.code.toLowerCase()));
    }),
  );
});
