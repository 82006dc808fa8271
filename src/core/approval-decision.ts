// What an approver's own text decides (SEMANTICS §12a), read by toolgate before any model runs, so
// no model's reading of a message ever approves anything. A request's decision code after "approve"
// or "deny" decides that request; a plain approval or refusal ("Approved, process it.", "No, don't
// refund it.") decides only when exactly one request is this sender's to decide, and only when
// nothing in the text hedges, asks or negates it. Anything else decides nothing: a wrong reading
// that refunds cannot be undone, one that waits costs the approver one more line.
//
// The text given is the approver's own (quoted history, forwarded parts and the signature already
// cut away), never the Subject, which the requester wrote and a reply repeats. Reading is linear in
// the text: one pass into sentences and words, then word comparisons.

export type Decision = 'approve' | 'deny';

/** A request this sender may decide, with the code that names it and its input as text. */
export interface DecidableCode {
  id: number;
  code: string;
  /** The request's tool input as JSON: a plain decision naming a number it does not hold is about something else. */
  input: string;
}

export type DecisionReading =
  { kind: 'decides'; decisions: { request_id: number; decision: Decision }[] } | { kind: 'none'; reason: NoDecisionReason };

/** Why a text decided nothing, in the words the approver is told. */
export type NoDecisionReason =
  | 'no_decision'
  | 'several_pending'
  | 'hedged'
  | 'mixed'
  | 'negated'
  | 'unknown_code'
  | 'conflicting_codes'
  | 'other_request'
  | 'nothing_pending';

export const NO_DECISION_WORDS: Record<NoDecisionReason, string> = {
  no_decision: 'the message neither approves nor refuses',
  several_pending:
    'several requests are pending, and a plain "approved" or "no" does not say which: write "approve <code>" or "deny <code>"',
  hedged: 'the message hedges or asks a question, so it was not taken as a decision',
  mixed: 'the message both approves and refuses',
  negated: 'the message negates its own approval',
  unknown_code: 'the code it names is not one of a request pending here for this sender',
  conflicting_codes: 'the message approves and denies the same request',
  other_request:
    'the message names something the pending request does not hold, so it may be about another one: write "approve <code>" or "deny <code>"',
  nothing_pending: 'no request is pending here for this sender to decide',
};

/** The decision code's length: 8 characters of Crockford's base32, 40 random bits. */
export const DECISION_CODE_LENGTH = 8;
const CODE_WORD = /^[0-9a-z]{8}$/;

const APPROVE_VERBS = new Set(['approve', 'approved']);
const DENY_VERBS = new Set(['deny', 'denied', 'reject', 'rejected', 'decline', 'declined', 'refuse', 'refused']);

// Words that may stand before a decision without changing it ("Yes, approved", "OK, go ahead").
const FILLERS = new Set([
  'yes',
  'yeah',
  'yep',
  'ok',
  'okay',
  'sure',
  'fine',
  'please',
  'alright',
  'all',
  'right',
  'then',
  'so',
  'great',
  'good',
  'thanks',
  'thank',
  'you',
  'hi',
  'hello',
  'hey',
]);
// Words that make a text something other than a plain decision: it waits, conditions, asks or muses.
const HEDGES = new Set([
  'check',
  'checking',
  'first',
  'later',
  'wait',
  'waiting',
  'hold',
  'yet',
  'maybe',
  'perhaps',
  'probably',
  'possibly',
  'if',
  'unless',
  'until',
  'once',
  'after',
  'before',
  'when',
  'ask',
  'asking',
  'think',
  'thinking',
  'might',
  'may',
  'should',
  'could',
  'would',
  'depends',
  'depending',
  'pending',
  'tomorrow',
  'back',
  'but',
  'except',
  'only',
  'instead',
  'hmm',
  'hm',
  'unsure',
  'question',
  'confirm',
  'verify',
  'investigate',
  'looking',
  'look',
]);
const NEGATIONS = new Set([
  'not',
  "don't",
  'dont',
  'never',
  'no',
  "can't",
  'cant',
  'cannot',
  "won't",
  'wont',
  "shouldn't",
  "mustn't",
  'nope',
  "isn't",
  "doesn't",
  "didn't",
]);
// What a decision word may be about: "process it", "refund this", "approve the refund".
const OBJECTS = new Set(['it', 'this', 'that', 'them', 'the', 'these', 'those', 'her', 'his', 'their', 'request', 'refund', 'one']);

/**
 * The decisions `text` makes about `decidable` (the requests pending in the thread that this
 * sender may decide). `text` is the approver's own words only.
 */
export function readDecision(text: string, decidable: readonly DecidableCode[]): DecisionReading {
  const sentences = sentencesOf(text);
  const coded = codedDecisions(sentences, decidable);
  if (coded !== null) return coded;
  const plain = plainDecision(sentences);
  if (plain.kind === 'none') return plain;
  if (decidable.length === 0) return { kind: 'none', reason: 'nothing_pending' };
  if (decidable.length > 1) return { kind: 'none', reason: 'several_pending' };
  const only = decidable[0]!;
  // "Approved, refund SCP-1042" while the request is for SCP-1050: the approver meant another one.
  const input = only.input.toLowerCase();
  if (plain.named.some((word) => !input.includes(word))) return { kind: 'none', reason: 'other_request' };
  return { kind: 'decides', decisions: [{ request_id: only.id, decision: plain.decision }] };
}

interface Sentence {
  words: string[];
  question: boolean;
}

/** Sentences as lowercase words, split at . ! ? ; : and line ends, in one pass. */
function sentencesOf(text: string): Sentence[] {
  const out: Sentence[] = [];
  let words: string[] = [];
  let word = '';
  const endWord = () => {
    if (word !== '') words.push(word);
    word = '';
  };
  const endSentence = (question: boolean) => {
    endWord();
    if (words.length > 0) out.push({ words, question });
    else if (question && out.length > 0) out[out.length - 1]!.question = true;
    words = [];
  };
  for (const ch of text.toLowerCase()) {
    if (ch === '’' || ch === '‘' || ch === "'") word += "'";
    else if (/[\p{L}\p{N}]/u.test(ch)) word += ch;
    else if (ch === '?') endSentence(true);
    else if (ch === '.' || ch === '!' || ch === ';' || ch === ':' || ch === '\n') endSentence(false);
    else endWord();
  }
  endSentence(false);
  return out;
}

/**
 * "approve <code>" / "deny <code>" anywhere in the text: null when it names no code. A code
 * phrase counts only in a sentence that neither asks, hedges nor negates; a code that is not one of
 * `decidable` decides nothing, and one both approved and denied decides nothing.
 */
function codedDecisions(sentences: readonly Sentence[], decidable: readonly DecidableCode[]): DecisionReading | null {
  const byCode = new Map(decidable.map((r) => [r.code.toLowerCase(), r.id]));
  const found = new Map<number, Decision | 'conflict'>();
  let named = false;
  let refused: NoDecisionReason | null = null;
  for (const sentence of sentences) {
    const { words } = sentence;
    for (let i = 0; i + 1 < words.length; i++) {
      const verb = words[i]!;
      const decision: Decision | null = APPROVE_VERBS.has(verb) ? 'approve' : DENY_VERBS.has(verb) ? 'deny' : null;
      const code = words[i + 1]!;
      // Codes always hold a digit (decision-code.ts), so "approve tomorrow" names none.
      if (decision === null || !CODE_WORD.test(code) || !/\d/.test(code)) continue;
      named = true;
      const id = byCode.get(code);
      if (id === undefined) {
        refused ??= 'unknown_code';
        continue;
      }
      if (sentence.question || words.some((w) => HEDGES.has(w))) {
        refused = 'hedged';
        continue;
      }
      if (words.slice(0, i).some((w) => NEGATIONS.has(w))) {
        refused = 'negated';
        continue;
      }
      const before = found.get(id);
      found.set(id, before === undefined || before === decision ? decision : 'conflict');
    }
  }
  if (!named) return null;
  const decisions = [...found].flatMap(([request_id, d]) => (d === 'conflict' ? [] : [{ request_id, decision: d }]));
  if (decisions.length > 0) return { kind: 'decides', decisions };
  return { kind: 'none', reason: [...found.values()].includes('conflict') ? 'conflicting_codes' : (refused ?? 'unknown_code') };
}

/** A plain approval or refusal of the whole text, with the words holding digits its decisions name, or why it is none. */
function plainDecision(
  sentences: readonly Sentence[],
): { kind: 'plain'; decision: Decision; named: string[] } | { kind: 'none'; reason: NoDecisionReason } {
  let approves = false;
  let refuses = false;
  const named: string[] = [];
  for (const sentence of sentences) {
    const lead = leadOf(sentence.words);
    if (lead !== null) named.push(...sentence.words.filter((w) => /\d/.test(w)));
    if (lead !== null && (sentence.question || sentence.words.some((w) => HEDGES.has(w)))) return { kind: 'none', reason: 'hedged' };
    if (lead === 'approve') {
      if (sentence.words.some((w) => NEGATIONS.has(w) || DENY_VERBS.has(w))) return { kind: 'none', reason: 'negated' };
      approves = true;
    } else if (lead === 'deny') {
      // A refusal may say no in many ways, but not approve anything besides ("no, approve it").
      if (sentence.words.some((w, i) => APPROVE_VERBS.has(w) && !NEGATIONS.has(sentence.words[i - 1] ?? ''))) {
        return { kind: 'none', reason: 'mixed' };
      }
      refuses = true;
    } else if (sentence.words.some((w) => APPROVE_VERBS.has(w) || DENY_VERBS.has(w) || NEGATIONS.has(w))) {
      // A decision word outside a decision ("the courier refused the return") is about something else,
      // or negates one: either way the text is not a plain decision.
      return { kind: 'none', reason: approves || refuses ? 'mixed' : 'no_decision' };
    } else if (sentence.question || sentence.words.some((w) => HEDGES.has(w))) {
      return { kind: 'none', reason: 'hedged' };
    }
  }
  if (approves && refuses) return { kind: 'none', reason: 'mixed' };
  if (approves) return { kind: 'plain', decision: 'approve', named };
  if (refuses) return { kind: 'plain', decision: 'deny', named };
  return { kind: 'none', reason: 'no_decision' };
}

/** Whether a sentence opens with a decision, once its fillers are skipped. */
function leadOf(words: readonly string[]): Decision | null {
  let i = 0;
  while (i < words.length && FILLERS.has(words[i]!)) i++;
  const [a, b, c] = [words[i], words[i + 1], words[i + 2]];
  if (a === undefined) return null;
  if (a === 'i' || a === 'we')
    return b !== undefined && APPROVE_VERBS.has(b) ? 'approve' : b !== undefined && DENY_VERBS.has(b) ? 'deny' : null;
  if (APPROVE_VERBS.has(a)) return 'approve';
  if (a === 'go' && b === 'ahead') return 'approve';
  if ((a === 'process' || a === 'refund' || a === 'issue') && b !== undefined && OBJECTS.has(b)) return 'approve';
  if (DENY_VERBS.has(a) || a === 'no' || a === 'nope') return 'deny';
  if ((a === "don't" || a === 'dont') && (b === 'refund' || b === 'process' || b === 'approve' || b === 'issue')) return 'deny';
  if (a === 'do' && b === 'not' && (c === 'refund' || c === 'process' || c === 'approve' || c === 'issue')) return 'deny';
  if (a === 'not' && b !== undefined && APPROVE_VERBS.has(b)) return 'deny';
  return null;
}
