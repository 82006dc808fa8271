// The local model's writing: short, polite templates filled from the analysis (the sender's first
// name, the category, the action items and their dates), signed with the agent's name.
import type { ActionItem, EmailAnalysis, EmailCategory } from '../email-analysis';

const CATEGORY_LINE: Record<EmailCategory, string> = {
  support: "I'm looking into this for you now.",
  billing: "I'm checking the billing details now and will come back to you with what I find.",
  complaint:
    "I'm sorry about this experience. It is not the standard we hold ourselves to, and I've raised it so it is looked at right away.",
  scheduling: "I'll check the calendar and confirm.",
  incident: "We're treating this as urgent and are investigating now; I'll send an update as soon as we know more.",
  newsletter: 'Thanks for the update.',
  gratitude: 'Thank you so much for your kind words: they mean a lot to the team.',
  sales: "I'll review your proposal and get back to you if it's a fit.",
  hiring: "I've passed your application on to the hiring team, who will be in touch.",
  feedback: "Thank you for the suggestion. I've shared it with the team.",
  other: "I'll get back to you shortly.",
};

const longDate = new Intl.DateTimeFormat('en-US', { weekday: 'long', month: 'long', day: 'numeric', timeZone: 'UTC' });

/** "2025-03-07" → "Friday, March 7". */
export function spokenDate(iso: string): string {
  return longDate.format(new Date(`${iso}T00:00:00Z`));
}

function greeting(firstName: string | null): string {
  return `Hi ${firstName ?? 'there'},`;
}

function opening(category: EmailCategory, subject: string): string {
  if (category === 'gratitude' || category === 'newsletter') return '';
  const about = subject.trim() ? ` about "${subject.trim()}"` : '';
  return `Thanks for your email${about}. `;
}

function earliestDue(items: ActionItem[]): string | undefined {
  return items
    .map((i) => i.due)
    .filter((d): d is string => d !== undefined)
    .sort()[0];
}

function acknowledgement(category: EmailCategory, items: ActionItem[]): string {
  const due = earliestDue(items);
  if (due && category === 'scheduling') return ` I've noted the date: ${spokenDate(due)}.`;
  if (due) return ` I've noted that you need this by ${spokenDate(due)}.`;
  if (items.length > 0) return " I've noted your request and will follow up.";
  return '';
}

function signature(agentName: string): string {
  return `Best regards,\n${agentName}`;
}

/** The analysis's short suggested reply. */
export function suggestedReply(
  firstName: string | null,
  subject: string,
  category: EmailCategory,
  items: ActionItem[],
  agentName: string,
): string {
  const body = `${opening(category, subject)}${CATEGORY_LINE[category]}${acknowledgement(category, items)}`;
  return `${greeting(firstName)}\n\n${body}\n\n${signature(agentName)}`;
}

/** The reply stage's fuller reply: the same opening, then each action item with its date. */
export function fullReply(firstName: string | null, subject: string, analysis: EmailAnalysis, agentName: string): string {
  const paragraphs = [greeting(firstName), `${opening(analysis.category, subject)}${CATEGORY_LINE[analysis.category]}`];
  if (analysis.action_items.length > 0) {
    const list = analysis.action_items.map((i) => `- ${i.title}${i.due ? ` (by ${spokenDate(i.due)})` : ''}`);
    paragraphs.push(["Here is what I've noted from your message:", ...list].join('\n'));
  }
  paragraphs.push(
    analysis.priority === 'urgent' || analysis.priority === 'high'
      ? "I'll keep you posted as this moves forward."
      : 'If anything else comes up, just reply to this email.',
  );
  paragraphs.push(signature(agentName));
  return paragraphs.join('\n\n');
}

const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening))\b/i;

/** A short, fixed answer to a chat message: the local model does not converse. */
export function chatReply(message: string, agentName: string): string {
  const intro = `I'm ${agentName}.`;
  if (GREETING.test(message))
    return `Hello! ${intro} I can analyze an email, draft a reply, or answer a question from this agent's documents.`;
  if (message.trim().endsWith('?')) {
    return `${intro} I can't answer that in chat: ask it through the documents, or send me the email it is about and I'll analyze it.`;
  }
  return `Thanks for your message. ${intro} I can analyze an email, draft a reply, or answer a question from this agent's documents.`;
}
