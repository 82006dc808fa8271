// The bounds an address is held to before the RFC 5322 parser reads it (SEMANTICS §12b), and what
// the readers of addresses answer past them: no key, no participant, no name to greet.
import { addressFieldsBreach, addressValueBreach, plainListKeys } from '../../src/core/address-bounds';
import { routingKeysOf } from '../../src/core/address-list';
import { routingKeyOf } from '../../src/core/routing-key';
import { senderOf } from '../../src/llm/local/sender';

const nestedComments = (depth: number) => `jane@acme.com ${'('.repeat(depth)}x${')'.repeat(depth)}`;

test('when comments nest 3 deep, then the address is within the bounds and keeps its key', () => {
  expect(addressValueBreach(nestedComments(3))).toBeNull();
  expect(routingKeyOf(nestedComments(3))).toBe('jane@acme.com');
});

test('when comments nest 4 deep, then the address is past address_comment_nesting and has no key', () => {
  expect(addressValueBreach(nestedComments(4))).toBe('address_comment_nesting');
  expect(routingKeyOf(nestedComments(4))).toBeNull();
});

test('when parentheses are unclosed or inside quotes, then they still count as nesting', () => {
  expect(addressValueBreach('('.repeat(998))).toBe('address_comment_nesting');
  expect(addressValueBreach('"((((" <jane@acme.com>')).toBe('address_comment_nesting');
});

test('when an address holds 17 comments, then it is past address_comments', () => {
  expect(addressValueBreach(`jane@acme.com ${'(x)'.repeat(17)}`)).toBe('address_comments');
  expect(addressValueBreach(`jane@acme.com ${'(x)'.repeat(16)}`)).toBeNull();
});

test('when a list of plain addresses is read, then its keys are the list parser’s, in order', () => {
  expect(plainListKeys('a@b.com, Jane <C+x@D.com>,"Doe Jane" <e@f.org>')).toEqual(['a@b.com', 'c@d.com', 'e@f.org']);
  expect(routingKeysOf('a@b.com, Jane <C+x@D.com>')).toEqual(['a@b.com', 'c@d.com']);
  expect(plainListKeys('"Doe, Jane" <j@a.com>, b@c.com')).toBeNull();
});

test('when a To value is past a bound, then it adds no participant', () => {
  expect(routingKeysOf(['mara@thescoop.com', `x@y.com ${'('.repeat(400)}${')'.repeat(400)}`])).toEqual(['mara@thescoop.com']);
});

test('when a From is past a bound, then the local model greets no one by name', () => {
  expect(senderOf(`Jane (${'('.repeat(5)}) <jane@acme.com>`)).toEqual({ firstName: null, local: '' });
  expect(senderOf('Jane Doe <jane@acme.com>').firstName).toBe('Jane');
});

test('when a message names 501 addresses, then it is past address_count at the 501st', () => {
  const to = Array.from({ length: 500 }, (_, i) => `p${i}@acme.com`);
  expect(addressFieldsBreach({ from: 'jane@acme.com', to: to.slice(0, 499) })).toBeNull();
  expect(addressFieldsBreach({ from: 'jane@acme.com', to })).toMatchObject({ bound: 'address_count', loc: ['to', 499] });
});

test('when plain addresses fill to and cc, then only their count is bounded, not their length', () => {
  const to = Array.from({ length: 250 }, (_, i) => `"Customer Number ${i}" <customer.number.${i}@mail.example.com>`);
  expect(addressFieldsBreach({ from: 'Jane Doe <jane@acme.com>', to, cc: to.slice(0, 249) })).toBeNull();
});

test('when more than 1,000 characters of addresses need the full parser, then the message is past address_text_length', () => {
  const odd = 'Jane (Sales) <jane@acme.com>'; // a comment: not a plain address
  const cc = Array.from({ length: 40 }, () => odd);
  expect(addressFieldsBreach({ from: 'jane@acme.com', cc: cc.slice(0, 35) })).toBeNull();
  expect(addressFieldsBreach({ from: 'jane@acme.com', cc })).toMatchObject({ bound: 'address_text_length', loc: ['cc', 35] });
});
