// A request's decision code (SEMANTICS §12a): what an approver writes after "approve" or "deny" to
// decide exactly that request. Short enough to type, random so that no other request's is derived
// from it, and always holding a digit so that no English word reads as one ("approve tomorrow").
import { randomInt } from 'node:crypto';
import { DECISION_CODE_LENGTH } from './approval-decision';

// Crockford's base32: no I, L, O or U, so a code read aloud or retyped is not misread.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newDecisionCode(): string {
  for (;;) {
    let code = '';
    for (let i = 0; i < DECISION_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    if (/\d/.test(code) && /[A-Z]/.test(code)) return code;
  }
}
