// The date a sentence asks for, as YYYY-MM-DD: `chrono-node` reads it relative to a reference
// instant in UTC (so the answer does not depend on the machine's time zone), looking forward only.
import * as chrono from 'chrono-node';

type Components = { year: number; month: number; day: number };

function ymd(d: Date): Components {
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function addDays(d: Date, days: number): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + days));
}

// Business shorthand chrono does not know: end of day is the reference day, end of week its
// Friday (the next one from a weekend), end of month its last day.
const endOfDay: chrono.Parser = {
  pattern: () => /\b(?:eod|cob|end of (?:the |business )?day|close of business)\b/i,
  extract: (context) => ymd(context.refDate),
};
const endOfWeek: chrono.Parser = {
  pattern: () => /\b(?:eow|end of (?:the |this )?week)\b/i,
  extract: (context) => {
    const friday = 5;
    return ymd(addDays(context.refDate, (friday - context.refDate.getUTCDay() + 7) % 7));
  },
};
const endOfMonth: chrono.Parser = {
  pattern: () => /\b(?:eom|end of (?:the |this )?month)\b/i,
  extract: (context) => {
    const r = context.refDate;
    return ymd(new Date(Date.UTC(r.getUTCFullYear(), r.getUTCMonth() + 1, 0)));
  },
};

const parser = chrono.casual.clone();
parser.parsers.unshift(endOfDay, endOfWeek, endOfMonth);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The first date the text names, on or after the reference day, or undefined. */
export function dueDate(text: string, reference: Date): string | undefined {
  for (const result of parser.parse(text, { instant: reference, timezone: 0 }, { forwardDate: true })) {
    const start = result.start;
    if (!start.isCertain('day') && !start.isCertain('weekday')) continue;
    // "15 minutes", "in the week": spans of time, not dates, unless counted from now ("within 2 days").
    if (result.tags().has('result/relativeDate') && !/^(in|within)\s+(\d|an?\b|one|two|three|four|five|six|seven|ten)/i.test(result.text))
      continue;
    const year = start.get('year');
    const month = start.get('month');
    const day = start.get('day');
    if (year === null || month === null || day === null) continue;
    const iso = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
    if (iso >= isoDay(reference)) return iso;
  }
  return undefined;
}

/** The reference instant's UTC calendar day. */
export function isoDay(d: Date): string {
  const c = ymd(d);
  return `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}`;
}
