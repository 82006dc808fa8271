// The fast path for plain addresses answers exactly what the RFC 5322 parser's path answers: over
// generated addresses built to sit on every edge of "plain" (tags, case, dots, hyphens, digits,
// `xn--`, label and key lengths, display names, characters just outside the plain set), over the
// is_email corpus, and over the routing-key tests' own vectors.
import fc from 'fast-check';
import { plainRoutingKey } from '../../src/core/plain-routing-key';
import { parsedRoutingKey, routingKeyOf } from '../../src/core/routing-key';
import { loadIsEmailCorpus } from '../support/is-email-corpus';

const RUNS = Number(process.env.TOOLGATE_FUZZ_RUNS ?? 3000);

const localChar = fc.constantFrom(...'abcXYZ0189_+-'.split(''), ...'.!#$%&\'*/=?^`{|}~"é '.split(''));
const atom = fc.string({ unit: fc.constantFrom(...'aZ09_+-'.split('')), minLength: 0, maxLength: 6 });
const local = fc.oneof(
  fc.array(atom, { minLength: 1, maxLength: 4 }).map((atoms) => atoms.join('.')),
  fc.string({ unit: localChar, minLength: 0, maxLength: 12 }),
);
const label = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abQZ09-'.split('')), minLength: 0, maxLength: 8 }),
  fc.constantFrom('xn--bcher-kva', 'XN--zz', 'xn--', '0x7f', '127', '1', 'a--b', '-a', 'a-', 'é', 'ａ', 'com', 'co_m'),
  fc.integer({ min: 60, max: 66 }).map((n) => 'a'.repeat(n)),
);
const domain = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join('.')),
  fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('.', '..', '。')).map(([labels, end]) => labels.join('.') + end),
  fc.integer({ min: 1, max: 6 }).map((n) => Array.from({ length: n * 10 }, () => 'abcde').join('.')),
);
const displayName = fc.oneof(
  fc.constant(''),
  fc.array(fc.string({ unit: fc.constantFrom(...'aZ09'.split('')), minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
  fc.constantFrom('J. Doe', '"Doe, Jane"', 'a  b', ' x', 'x\t', '(c) x', 'Zoë'),
);
const address = fc.tuple(displayName, local, domain, fc.constantFrom('@', '@', '@', '@@', ' @')).map(([name, l, d, at]) => {
  const bare = `${l}${at}${d}`;
  return name === '' ? bare : `${name} <${bare}>`;
});
const padded = fc.tuple(address, fc.constantFrom('', ' ', '\t', '>', '<')).map(([a, pad]) => a + pad);

// Mostly plain: atoms of the plain set, LDH labels that start with a letter, now and then a name.
const word = (chars: string, max: number) => fc.string({ unit: fc.constantFrom(...chars.split('')), minLength: 1, maxLength: max });
const plainish = fc
  .tuple(
    fc.array(word('abXY09_+-', 8), { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(word('abQZ', 2), fc.string({ unit: fc.constantFrom(...'aZ09-'.split('')), maxLength: 12 })), { minLength: 1, maxLength: 4 }),
    fc.option(word('aZ09', 6), { nil: undefined }),
  )
  .map(([atoms, labels, name]) => {
    const bare = `${atoms.join('.')}@${labels.map(([head, tail]) => head + tail).join('.')}`;
    return name === undefined ? bare : `${name} <${bare}>`;
  });

function agreesWithParser(sender: string): void {
  expect({ sender, key: routingKeyOf(sender) }).toEqual({ sender, key: parsedRoutingKey(sender) });
}

describe('the routing key of a plain address', () => {
  test('when an address is generated on the edges of "plain", then the fast path answers as the parser does', () => {
    let plain = 0;
    let keyed = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: plainish, weight: 3 }, address, padded), (sender) => {
        const fast = plainRoutingKey(sender);
        if (fast !== undefined) plain += 1;
        if (typeof fast === 'string') keyed += 1;
        agreesWithParser(sender);
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: a good share of the inputs took the fast path, most of them with a key.
    expect(plain).toBeGreaterThan(RUNS / 10);
    expect(keyed).toBeGreaterThan(RUNS / 20);
  });

  test('when any string is given, then routingKeyOf answers as the parser does', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (sender) => agreesWithParser(sender)), { numRuns: RUNS });
  });

  test('when the is_email corpus is read, then every case is answered as the parser does', () => {
    const corpus = loadIsEmailCorpus();
    expect(corpus).toHaveLength(164);
    for (const c of corpus) agreesWithParser(c.address);
    expect(corpus.filter((c) => plainRoutingKey(c.address) !== undefined).length).toBeGreaterThan(10);
  });

  test.each([
    ['jane@acme.com', 'jane@acme.com'],
    ['JANE@ACME.COM', 'jane@acme.com'],
    ['Mara+billing@TheScoop.com', 'mara@thescoop.com'],
    ['Mara <Mara+billing@TheScoop.com>', 'mara@thescoop.com'],
    ['first.last@sub.example.org', 'first.last@sub.example.org'],
    ['+tag@x.com', null],
    ['a@-a.com', null],
    [`a@${'b'.repeat(64)}.com`, null],
    ['a@b', 'a@b'],
  ])('when the sender is %j, then the fast path answers %j, as the parser does', (sender, key) => {
    expect(plainRoutingKey(sender)).toBe(key);
    expect(parsedRoutingKey(sender)).toBe(key);
  });

  test.each(['x@y.com>', 'Jo <a@b.com', 'Jo <a@b.com> ', 'Jo  <a@b.com>', 'a <b <c@d.com>', 'Jo <a@b.com>>', 'Jo <<a@b.com>', 'Jo <a+b@XN--bcher-kva.de>', 'Jo <+x@b.com>', 'JO 7 <A.B+C@D-E.F>'])(
    'when the sender %j sits on the edge of the name form, then routingKeyOf answers as the parser does',
    (sender) => agreesWithParser(sender),
  );

  test.each(['a@xn--bcher-kva.de', 'a@0x7f.1', 'a@b.com.', '"a"@b.com', 'a@bücher.de', ' a@b.com', 'J. Doe <a@b.com>', 'a..b@c.com', 'a!b@c.com'])(
    'when the sender is %j, then it is not plain and the parser decides',
    (sender) => {
      expect(plainRoutingKey(sender)).toBeUndefined();
    },
  );
});
