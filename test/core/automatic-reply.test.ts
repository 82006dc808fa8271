// Whether a message is an automatic reply (SEMANTICS §12a, RFC 3834): one never decides nor acts.
import { isAutomaticReply } from '../../src/core/automatic-reply';

const human = { own_text: 'Approved, process it.' };

test.each([
  ['Auto-Submitted: auto-replied', { auto_submitted: 'auto-replied' }],
  ['Auto-Submitted: auto-generated; owner-email="x@y"', { auto_submitted: 'auto-generated; owner-email="x@y"' }],
  ['Precedence: bulk', { precedence: 'bulk' }],
  ['Precedence: Auto_Reply', { precedence: 'Auto_Reply' }],
  ['X-Autoreply: yes', { x_autoreply: 'yes' }],
  ['X-Autorespond: 1', { x_autorespond: '1' }],
  ['Subject "Automatic reply: Re: Melted"', { subject: 'Automatic reply: Re: Melted' }],
  ['Subject "Out of Office: …"', { subject: 'Out of Office: Re: Melted order' }],
  ['a body "I am out of the office until Monday"', { own_text: 'I am out of the office until Monday. Approved.' }],
])('when a message carries %s, then it is an automatic reply', (_what, signs) => {
  expect(isAutomaticReply({ ...human, ...signs })).toBe(true);
});

test.each([
  ['Auto-Submitted: no', { auto_submitted: 'no' }],
  ['Precedence: first-class', { precedence: 'first-class' }],
  ['X-Autoreply: no', { x_autoreply: 'no' }],
  ['a Subject that only mentions the office', { subject: 'Re: the office fridge' }],
  ['no marks at all', {}],
])("when a message carries %s, then it is a person's", (_what, signs) => {
  expect(isAutomaticReply({ ...human, ...signs })).toBe(false);
});
