// The local model on realistic email: the obvious things right, the same answer every time, and
// answers quoted from the sources, never made up.
import fc from 'fast-check';
import { NO_ANSWER, type ModelContext, type ModelSource } from '../../src/llm/language-model';
import { LocalModel } from '../../src/llm/local-model';
import { emailAnalysisSchema, type EmailAnalysis } from '../../src/llm/email-analysis';
import { asEmail, fixtureEmail, loadEmailFixtures } from './email-fixtures';

const model = new LocalModel();
const ctx: ModelContext = { agentName: 'Sundae', systemPrompt: null, now: new Date('2025-06-01T12:00:00Z') };
const fixtures = loadEmailFixtures();
const analyses = new Map<string, EmailAnalysis>();

beforeAll(async () => {
  for (const f of fixtures) analyses.set(f.name, await model.analyzeEmail(asEmail(f), ctx));
});

const analysisOf = (name: string): EmailAnalysis => {
  const a = analyses.get(name);
  if (!a) throw new Error(`no analysis for ${name}`);
  return a;
};

describe('the email fixture', () => {
  test('when the fixture is loaded, then it holds at least fourteen emails, each with expectations', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(14);
    expect(fixtures.every((f) => Object.keys(f.expect).length > 0)).toBe(true);
  });

  const rows = fixtures.flatMap((f) => {
    const e = f.expect;
    return [
      ...(e.category ? [[f.name, 'category', e.category] as const] : []),
      ...(e.priority ? [[f.name, 'priority', e.priority] as const] : []),
      ...(e.sentiment ? [[f.name, 'sentiment', e.sentiment] as const] : []),
    ];
  });
  test.each(rows)('when the %s email is analyzed, then its %s is %s', (name, field, expected) => {
    expect(analysisOf(name)[field]).toBe(expected);
  });

  const dueRows = fixtures.flatMap((f) => (f.expect.due_dates ?? []).map((due) => [f.name, due] as const));
  test.each(dueRows)('when the %s email is analyzed, then an action item is due %s', (name, due) => {
    expect(analysisOf(name).action_items.map((i) => i.due)).toContain(due);
  });

  const quietRows = fixtures.filter((f) => f.expect.no_action_items).map((f) => f.name);
  test.each(quietRows)('when the %s email is analyzed, then it has no action items', (name) => {
    expect(analysisOf(name).action_items).toEqual([]);
  });

  const undatedRows = fixtures.filter((f) => f.expect.no_due_dates).map((f) => f.name);
  test.each(undatedRows)('when the %s email is analyzed, then no action item carries a due date', (name) => {
    expect(analysisOf(name).action_items.filter((i) => i.due !== undefined)).toEqual([]);
  });

  test('when any fixture email is analyzed, then the analysis fits the HTTP.md schema', () => {
    for (const f of fixtures) expect(emailAnalysisSchema.safeParse(analysisOf(f.name)).success).toBe(true);
  });

  test('when any fixture email is analyzed, then the summary is at most 240 characters and titles at most 120', () => {
    for (const f of fixtures) {
      const a = analysisOf(f.name);
      expect(a.summary.length).toBeLessThanOrEqual(240);
      for (const item of a.action_items) expect(item.title.length).toBeLessThanOrEqual(120);
    }
  });
});

describe('the obvious things', () => {
  test('when a customer complains angrily, then the sentiment is negative and the category complaint', () => {
    expect(analysisOf('angry-complaint')).toMatchObject({ sentiment: 'negative', category: 'complaint' });
  });

  test('when a message asks for something "by Friday", then it is due the Friday after the message arrived', async () => {
    const wednesday = fixtureEmail('refund-request');
    const monday = { ...wednesday, received_at: new Date('2025-03-10T09:00:00Z') };
    expect((await model.analyzeEmail(wednesday, ctx)).action_items.map((i) => i.due)).toContain('2025-03-07');
    expect((await model.analyzeEmail(monday, ctx)).action_items.map((i) => i.due)).toContain('2025-03-14');
  });

  test('when a message has no received date, then its relative dates resolve against ctx.now', async () => {
    const { received_at: _dropped, ...undated } = fixtureEmail('refund-request');
    const analysis = await model.analyzeEmail(undated, { ...ctx, now: new Date('2025-03-12T08:00:00Z') });
    expect(analysis.action_items.map((i) => i.due)).toContain('2025-03-14');
  });

  test('when checkout is down, then the priority is urgent', () => {
    expect(analysisOf('outage-report')).toMatchObject({ category: 'incident', priority: 'urgent' });
  });

  test('when a newsletter arrives, then it is low priority with no action items', () => {
    expect(analysisOf('newsletter')).toMatchObject({ category: 'newsletter', priority: 'low', action_items: [] });
  });

  test('when a thank-you note arrives, then the sentiment is positive', () => {
    expect(analysisOf('thank-you-note').sentiment).toBe('positive');
  });

  test('when a meeting is requested for next Tuesday at 3pm, then an action item asks for it, due that Tuesday', () => {
    const meeting = analysisOf('meeting-request').action_items.find((i) => /Tuesday at 3pm/.test(i.title));
    expect(meeting?.due).toBe('2025-03-11');
  });

  test('when a reply quotes an earlier message, then the quoted dates and words are not analyzed', () => {
    const reply = analysisOf('refund-approval-reply');
    expect(reply.summary).not.toMatch(/melted/);
    expect(reply.action_items.map((i) => i.title)).toEqual(
      expect.arrayContaining([expect.stringMatching(/process the refund for SCP-1042/i)]),
    );
  });

  test('when a message is summarized, then the summary quotes its opening sentences, not the greeting', () => {
    expect(analysisOf('angry-complaint').summary).toMatch(/^This is the THIRD time in a month/);
  });
});

describe('replies', () => {
  test('when a suggested reply is written, then it greets the sender by first name and is signed by the agent', () => {
    const reply = analysisOf('refund-request').suggested_reply;
    expect(reply).toMatch(/^Hi Jane,/);
    expect(reply).toMatch(/Sundae$/);
  });

  test('when a suggested reply is written for a request with a date, then it acknowledges the date', () => {
    expect(analysisOf('invoice-question').suggested_reply).toContain('Friday, March 14');
  });

  test('when the sender is an organisation, then the reply greets "there" rather than a first word', () => {
    expect(analysisOf('newsletter').suggested_reply).toMatch(/^Hi there,/);
  });

  test('when a full reply is written, then it lists each action item with its date', async () => {
    const email = fixtureEmail('refund-request');
    const reply = await model.writeReply(email, analysisOf('refund-request'), ctx);
    expect(reply).toContain('- Process it by Friday');
    expect(reply).toContain('(by Friday, March 7)');
    expect(reply).toMatch(/Best regards,\nSundae$/);
  });

  test('when the agent is greeted in chat, then it answers with its name', async () => {
    await expect(model.chat('Hello there!', ctx)).resolves.toMatch(/^Hello! I'm Sundae\./);
  });
});

describe('any input', () => {
  test('when any sender, subject and body are analyzed, then the analysis fits the HTTP.md schema', async () => {
    const body = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.lorem({ mode: 'sentences', maxCount: 10 }));
    const subject = fc.option(fc.string({ maxLength: 40 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 40 }), subject, body, fc.date(), async (from, subj, text, received_at) => {
        const analysis = await model.analyzeEmail({ from, subject: subj, body: text, received_at }, ctx);
        return emailAnalysisSchema.safeParse(analysis).success;
      }),
      { numRuns: 200 },
    );
  });
});

describe('determinism', () => {
  test('when the same emails are analyzed again by another instance, then every analysis is identical', async () => {
    const again = new LocalModel();
    for (const f of fixtures) expect(await again.analyzeEmail(asEmail(f), ctx)).toEqual(analysisOf(f.name));
  });

  test('when the same reply, answer and chat are asked twice, then the text is identical', async () => {
    const email = fixtureEmail('invoice-question');
    const sources = [{ title: 'Billing', text: 'Corrected invoices are sent within two business days.' }];
    const twice = async () => [
      await model.writeReply(email, analysisOf('invoice-question'), ctx),
      await model.answerQuestion('When are corrected invoices sent?', sources, ctx),
      await model.chat('Can you help?', ctx),
    ];
    expect(await twice()).toEqual(await twice());
  });
});

describe('answerQuestion', () => {
  const policy: ModelSource[] = [
    {
      title: 'Refund policy',
      text: 'We refund melted orders in full. Refunds go back to the original card within five business days.\n\nStore credit never expires.',
    },
    { title: 'Opening hours', text: 'The Elm Street shop opens at 11am on weekdays. On Sundays we open at noon.' },
  ];

  test('when a source answers the question, then the answer quotes the best matching sentence first', async () => {
    const answer = await model.answerQuestion('How long do refunds take to reach my card?', policy, ctx);
    expect(answer.split('\n')[0]).toBe('Refunds go back to the original card within five business days.');
  });

  test("when no source shares the question's terms, then the answer is the fixed no-answer sentence", async () => {
    await expect(model.answerQuestion('Do you sell vegan waffle cones?', policy, ctx)).resolves.toBe(NO_ANSWER);
  });

  test('when the question is only stopwords, then the answer is the fixed no-answer sentence', async () => {
    await expect(model.answerQuestion('What is it?', policy, ctx)).resolves.toBe(NO_ANSWER);
  });

  test('when any question meets any sources, then every line of the answer occurs verbatim in a source', async () => {
    const text = fc.oneof(fc.lorem({ mode: 'sentences', maxCount: 8 }), fc.string({ unit: 'grapheme', maxLength: 200 }));
    const sources = fc.array(fc.record({ title: fc.string({ maxLength: 20 }), text }), { maxLength: 5 });
    const anyQuestion = fc.oneof(fc.lorem({ maxCount: 6 }), fc.string({ unit: 'grapheme', maxLength: 60 }));
    // Questions made of the sources' own words, so that most cases do get an answer to check.
    const asked = sources.chain((s) => {
      const vocabulary = s.flatMap((src) => src.text.split(/\s+/)).filter(Boolean);
      const question =
        vocabulary.length > 0
          ? fc.oneof(
              fc.subarray(vocabulary, { maxLength: Math.min(6, vocabulary.length) }).map((w) => w.join(' ')),
              anyQuestion,
            )
          : anyQuestion;
      return question.map((q) => [q, s] as const);
    });
    await fc.assert(
      fc.asyncProperty(asked, async ([q, s]) => {
        const answer = await model.answerQuestion(q, s, ctx);
        return answer === NO_ANSWER || answer.split('\n').every((line) => line.length > 0 && s.some((src) => src.text.includes(line)));
      }),
      { numRuns: 300 },
    );
  });
});
