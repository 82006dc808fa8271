// Category, priority and sentiment from a few signals, in a fixed order so the result is easy to
// explain:
// - sentiment is the tone score (tone.ts) of the subject and the sender's own words;
// - automatic replies (RFC 3834: "Automatic reply:", "Out of office:") are `other`, and ask nothing;
// - newsletters are recognised by structure (an unsubscribe line, a list sender), not by topic;
// - the topic is the category whose cue stems occur most (subject words count double), ties going
//   to the earlier category in CUES; two incident cues make an incident whatever else the message
//   names; a strongly negative message that is not an incident is a complaint whatever its topic;
//   thanks count only when the tone is positive;
// - priority follows the category and the nearest due date (see `priorityOf`).
import type { ActionItem, EmailCategory, Priority } from '../email-analysis';
import { isoDay } from './due-date';
import { cueSet, stemOf, terms, words } from './terms';
import { TONE_MARK } from './tone';

/** At or below this tone score the message is a complaint, whatever it is about (unless an incident). */
const COMPLAINT_MARK = -15;
/** Incident cues needed to make an incident of a message that also names other topics. */
const INCIDENT_EVIDENCE = 2;

// A few cue words per topic: the words a person uses to name the topic itself, not its symptoms.
const CUES: ReadonlyArray<readonly [Exclude<EmailCategory, 'newsletter' | 'complaint' | 'other'>, ReadonlySet<string>]> = [
  [
    'incident',
    cueSet([
      'outage',
      'downtime',
      'incident',
      'breach',
      'compromised',
      'phishing',
      'unauthorized',
      'attack',
      'vulnerability',
      'crash',
      'offline',
      'hacked',
    ]),
  ],
  ['billing', cueSet(['invoice', 'refund', 'charge', 'payment', 'bill', 'receipt', 'overcharged', 'reimbursement'])],
  [
    'scheduling',
    cueSet(['meeting', 'meet', 'schedule', 'calendar', 'availability', 'appointment', 'reschedule', 'invitation', 'invite', 'rsvp']),
  ],
  ['hiring', cueSet(['application', 'apply', 'resume', 'cv', 'position', 'candidate', 'vacancy', 'job', 'hiring'])],
  ['support', cueSet(['password', 'login', 'account', 'order', 'delivery', 'tracking', 'shipping', 'package', 'access', 'help'])],
  ['sales', cueSet(['demo', 'pricing', 'quote', 'discount', 'offer', 'proposal', 'partnership', 'trial'])],
  ['feedback', cueSet(['suggestion', 'suggest', 'feature', 'idea', 'feedback', 'improvement'])],
  ['gratitude', cueSet(['thank', 'thanks', 'grateful', 'appreciate', 'kudos'])],
];
const COMPLAINT_CUES = cueSet(['complaint', 'complain', 'unacceptable']);
// "The site is down": the one incident cue that needs its verb to mean anything. It counts like a
// cue word, so "prices went down" in a body is one hit, never an incident by itself.
const IS_DOWN = /\b(is|are|was|were|went|been)\s+down\b/i;
const URGENCY = cueSet(['urgent', 'asap', 'immediately', 'emergency', 'critical']);
const LIST_SENDER = /^(newsletter|news|digest|updates?|marketing|no-?reply|do-?not-?reply|mailer|bulletin)\b/i;
const LIST_FOOTER = /\bunsubscribe\b|\bview (this|it) (email )?in (your|a) browser\b|\bupdate your (email )?preferences\b/i;
const AUTO_REPLY = /^(automatic reply|auto-?reply|autoreply|out of (the )?office|ooo)\b/i;

export interface Signals {
  subject: string;
  /** The sender's own sentences (quotes and signature removed). */
  sentences: string[];
  /** The whole body as sent, for structural signals such as a list footer. */
  rawBody: string;
  /** The sender's address (local part), for list senders. */
  senderLocal: string;
}

export function isBulkMail(s: Signals): boolean {
  return LIST_FOOTER.test(s.rawBody) || LIST_SENDER.test(s.senderLocal);
}

export function isAutoReply(s: Signals): boolean {
  return AUTO_REPLY.test(s.subject.trim());
}

/** Mail no person wrote to this reader: its calls to action ask nothing of them. */
export function isMachineMail(s: Signals): boolean {
  return isBulkMail(s) || isAutoReply(s);
}

export function categoryOf(s: Signals, score: number): EmailCategory {
  if (isBulkMail(s)) return 'newsletter';
  if (isAutoReply(s)) return 'other';
  const body = s.sentences.join(' ');
  const subjectTerms = terms(s.subject);
  const bodyTerms = terms(body);
  const tally = new Map<EmailCategory, number>();
  for (const [category, cues] of CUES) {
    const hits = 2 * subjectTerms.filter((t) => cues.has(t)).length + bodyTerms.filter((t) => cues.has(t)).length;
    tally.set(category, hits);
  }
  const downHits = (IS_DOWN.test(s.subject) ? 2 : 0) + (IS_DOWN.test(body) ? 1 : 0);
  tally.set('incident', (tally.get('incident') ?? 0) + downHits);
  if (score < TONE_MARK) tally.set('gratitude', 0);

  if ((tally.get('incident') ?? 0) >= INCIDENT_EVIDENCE) return 'incident';
  let best: EmailCategory = 'other';
  let bestHits = 0;
  for (const [category] of CUES) {
    const hits = tally.get(category) ?? 0;
    if (hits > bestHits) [best, bestHits] = [category, hits];
  }
  if (best === 'incident') return best;
  const complains = [...subjectTerms, ...bodyTerms].some((t) => COMPLAINT_CUES.has(t));
  if (score <= COMPLAINT_MARK || (complains && score <= -TONE_MARK)) return 'complaint';
  return best;
}

const LOW_PRIORITY: ReadonlySet<EmailCategory> = new Set(['newsletter', 'gratitude', 'feedback', 'sales']);

/**
 * In this order:
 * - `urgent`: an incident;
 * - `low`: bulk mail, thanks, suggestions and unsolicited offers, whatever dates they name, and
 *   anything else that asks nothing;
 * - `high`: a complaint, an urgency word ("urgent", "asap"), or something due within two days;
 * - `medium`: the rest.
 */
export function priorityOf(category: EmailCategory, s: Signals, items: ActionItem[], reference: Date): Priority {
  if (category === 'incident') return 'urgent';
  if (LOW_PRIORITY.has(category) || (category === 'other' && items.length === 0)) return 'low';
  const text = `${s.subject} ${s.sentences.join(' ')}`;
  const urgent = words(text).some((w) => URGENCY.has(stemOf(w)));
  const soon = isoDay(new Date(reference.getTime() + 2 * 86_400_000));
  const dueSoon = items.some((i) => i.due !== undefined && i.due <= soon);
  if (category === 'complaint' || urgent || dueSoon) return 'high';
  return 'medium';
}
