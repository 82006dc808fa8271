// Whether a message was written by a machine on someone's behalf (SEMANTICS §12a): an automatic
// reply never decides an approval and never acts, whoever it comes from. RFC 3834's Auto-Submitted
// (anything but "no"), the Precedence values mailers set on bulk and automatic mail, the X-Autoreply
// family, and the usual out-of-office forms in the Subject or the first lines of the body. Reading
// the Subject here can only take capabilities away, never grant one.

export interface AutomaticReplySigns {
  auto_submitted?: string | undefined;
  precedence?: string | undefined;
  x_autoreply?: string | undefined;
  x_autorespond?: string | undefined;
  subject?: string | undefined;
  /** The sender's own text (quoted history cut away). */
  own_text: string;
}

const AUTOMATIC_PRECEDENCE = new Set(['bulk', 'junk', 'list', 'auto_reply']);
const OFF = new Set(['', 'no', 'false', '0', 'off']);
const OUT_OF_OFFICE_SUBJECT =
  /^\s*(?:auto(?:matic)?[ -]?(?:reply|response|antwort)|autoreply|out of (?:the )?office|ooo\b|away from (?:the )?office|on vacation|vacation (?:reply|notice)|abwesenheitsnotiz|r[ée]ponse automatique|autosvar|absence)/i;
const OUT_OF_OFFICE_BODY =
  /\b(?:out of (?:the )?office|automatic(?:ally generated)? (?:reply|response|message)|auto-?reply|auto-?response|automated (?:reply|response|message)|this is an automatic|i am (?:currently )?away|i'm (?:currently )?away|on (?:annual )?leave until|away until|limited access to (?:my )?e-?mail)\b/i;
/** How far into the body an out-of-office notice is looked for: such notices say so at once. */
const OPENING_CHARS = 400;

export function isAutomaticReply(signs: AutomaticReplySigns): boolean {
  const token = (value: string | undefined) => (value ?? '').split(';')[0]!.trim().toLowerCase();
  if (signs.auto_submitted !== undefined && token(signs.auto_submitted) !== 'no') return true;
  if (AUTOMATIC_PRECEDENCE.has(token(signs.precedence))) return true;
  for (const header of [signs.x_autoreply, signs.x_autorespond]) {
    if (header !== undefined && !OFF.has(token(header))) return true;
  }
  if (OUT_OF_OFFICE_SUBJECT.test((signs.subject ?? '').slice(0, 200))) return true;
  return OUT_OF_OFFICE_BODY.test(signs.own_text.slice(0, OPENING_CHARS));
}
