// The fast path for plain addresses answers exactly what the RFC 5322 parser's path answers: over
// generated addresses built to sit on every edge of "plain" (tags, case, dots, hyphens, digits,
// `xn--`, label and key lengths, display names plain and quoted, characters just outside the plain
// set, invisible characters in names, local parts and domains), over the is_email corpus, and over
// the routing-key tests' own vectors.
import fc from 'fast-check';
import { plainRoutingKey } from '../../src/core/plain-routing-key';
import { parsedRoutingKey, routingKeyOf } from '../../src/core/routing-key';
import { loadIsEmailCorpus } from '../support/is-email-corpus';

const RUNS = Number(process.env.TOOLGATE_FUZZ_RUNS ?? 3000);

const word = (chars: string, max: number) => fc.string({ unit: fc.constantFrom(...chars.split('')), minLength: 1, maxLength: max });

// Invisible characters (SEMANTICS §3): bidirectional controls, zero-width and format characters,
// spaces other than U+0020, line and paragraph separators, fillers and variation selectors.
const INVISIBLE = [
  '\u061C',
  '\u200E',
  '\u200F',
  '\u202A',
  '\u202E',
  '\u2066',
  '\u2069',
  '\uFEFF',
  '\u00A0',
  '\u3000',
  '\u2028',
  '\u2029',
  '\u200B',
  '\u200D',
  '\u2060',
  '\u00AD',
  '\u3164',
  '\uFE0F',
  '\u{E0061}',
];
const invisible = fc.constantFrom(...INVISIBLE);
const localChar = fc.constantFrom(...'abcXYZ0189_+-'.split(''), ...'.!#$%&\'*/=?^`{|}~"é '.split(''));
const atom = fc.string({ unit: fc.constantFrom(...'aZ09_+-'.split('')), minLength: 0, maxLength: 6 });
const local = fc.oneof(
  fc.array(atom, { minLength: 1, maxLength: 4 }).map((atoms) => atoms.join('.')),
  fc.string({ unit: localChar, minLength: 0, maxLength: 12 }),
  fc.tuple(atom, invisible, atom).map(([a, z, b]) => a + z + b),
);
const label = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abQZ09-'.split('')), minLength: 0, maxLength: 8 }),
  fc.constantFrom('xn--bcher-kva', 'XN--zz', 'xn--', '0x7f', '127', '1', 'a--b', '-a', 'a-', 'é', 'ａ', 'com', 'co_m'),
  fc.integer({ min: 60, max: 66 }).map((n) => 'a'.repeat(n)),
  fc.tuple(fc.constantFrom('the', 'thé', ''), invisible, fc.constantFrom('scoop', 'com', '')).map(([a, z, b]) => a + z + b),
);
const domain = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join('.')),
  fc
    .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('.', '..', '。'))
    .map(([labels, end]) => labels.join('.') + end),
  fc.integer({ min: 1, max: 6 }).map((n) => Array.from({ length: n * 10 }, () => 'abcde').join('.')),
);
// What a quoted display name may hold: words, commas, and characters on the edge of a quoted string.
const quotedChar = fc.constantFrom(..."aZ09 ,.@<>()[]:;'!#-".split(''), '"', '\\', '\t', 'é', 'ë', '山', ...INVISIBLE);
const quotedName = fc.oneof(
  fc.tuple(word('aZ09', 6), word('aZ09', 6)).map(([last, first]) => `"${last}, ${first}"`),
  fc.array(word('aZ09', 5), { minLength: 1, maxLength: 3 }).map((w) => `"${w.join(' ')}"`),
  fc.string({ unit: quotedChar, minLength: 0, maxLength: 10 }).map((inner) => `"${inner}"`),
  fc.string({ unit: 'binary', minLength: 0, maxLength: 6 }).map((inner) => `"${inner}"`),
);
// The same words unquoted: an address list whose first entry is no mailbox.
const listedName = fc
  .tuple(word('aZ09', 6), word('aZ09', 6), fc.constantFrom(', ', ',', ' , ', ',, '))
  .map(([last, first, comma]) => `${last}${comma}${first}`);
// Names in any script, as RFC 6532 lets a phrase hold them, with the edges: a combining mark, an
// invisible letter (U+3164), a letter outside the BMP.
const unicodeName = fc
  .array(word('aZ9éœßД山ㅤ', 5), { minLength: 1, maxLength: 3 })
  .chain((w) => fc.constantFrom(w.join(' '), `${w.join(' ')}\u0301`, `𝒥${w.join(' ')}`));
const displayName = fc.oneof(
  fc.constant(''),
  unicodeName,
  fc
    .array(fc.string({ unit: fc.constantFrom(...'aZ09'.split('')), minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 })
    .map((w) => w.join(' ')),
  fc.constantFrom(
    'J. Doe',
    '"Doe, Jane"',
    'Doe, Jane',
    'a  b',
    ' x',
    'x\t',
    '(c) x',
    'Zoë',
    '""',
    '"a\\"b"',
    '"Jane" Doe',
    '"Jane"',
    'Jane "Doe"',
  ),
  quotedName,
  listedName,
);
const address = fc.tuple(displayName, local, domain, fc.constantFrom('@', '@', '@', '@@', ' @')).map(([name, l, d, at]) => {
  const bare = `${l}${at}${d}`;
  return name === '' ? bare : `${name} <${bare}>`;
});
const padded = fc.tuple(address, fc.constantFrom('', ' ', '\t', '>', '<')).map(([a, pad]) => a + pad);

// Mostly plain: atoms of the plain set, LDH labels that start with a letter, now and then a name.
const plainish = fc
  .tuple(
    fc.array(word('abXY09_+-', 8), { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(word('abQZ', 2), fc.string({ unit: fc.constantFrom(...'aZ09-'.split('')), maxLength: 12 })), {
      minLength: 1,
      maxLength: 4,
    }),
    fc.option(fc.oneof(word('aZ09', 6), unicodeName, quotedName, listedName), { nil: undefined }),
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
    let quoted = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: plainish, weight: 3 }, address, padded), (sender) => {
        const fast = plainRoutingKey(sender);
        if (fast !== undefined) plain += 1;
        if (typeof fast === 'string') keyed += 1;
        if (typeof fast === 'string' && sender.startsWith('"')) quoted += 1;
        agreesWithParser(sender);
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: a good share of the inputs took the fast path, most of them with a key, some of
    // them behind a quoted name.
    expect(plain).toBeGreaterThan(RUNS / 10);
    expect(keyed).toBeGreaterThan(RUNS / 20);
    expect(quoted).toBeGreaterThan(RUNS / 50);
  });

  test('when any string is given, then routingKeyOf answers as the parser does', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (sender) => agreesWithParser(sender)),
      { numRuns: RUNS },
    );
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

  // Issue 19, finding 10: mail clients quote names with commas or dots, which took the parser's ~40 µs.
  test.each([
    ['"Jane Doe" <jane@acme.com>', 'jane@acme.com'],
    ['"Doe, Jane" <Jane+x@Acme.com>', 'jane@acme.com'],
    ['"J. Doe (Finance)" <j.doe@acme.com>', 'j.doe@acme.com'],
    ['"" <jane@acme.com>', 'jane@acme.com'],
    ['"Doe, Jane" <+x@acme.com>', null],
    ['Doe, Jane <jane@acme.com>', null],
  ])('when the sender %j names itself with a quoted name or a comma, then the fast path answers %j, as the parser does', (sender, key) => {
    expect(plainRoutingKey(sender)).toBe(key);
    expect(parsedRoutingKey(sender)).toBe(key);
  });

  test.each([
    'x@y.com>',
    'Jo <a@b.com',
    'Jo <a@b.com> ',
    'Jo  <a@b.com>',
    'a <b <c@d.com>',
    'Jo <a@b.com>>',
    'Jo <<a@b.com>',
    'Jo <a+b@XN--bcher-kva.de>',
    'Jo <+x@b.com>',
    'JO 7 <A.B+C@D-E.F>',
  ])('when the sender %j sits on the edge of the name form, then routingKeyOf answers as the parser does', (sender) =>
    agreesWithParser(sender),
  );

  test.each([
    'a@xn--bcher-kva.de',
    'a@0x7f.1',
    'a@b.com.',
    '"a"@b.com',
    'a@bücher.de',
    ' a@b.com',
    'J. Doe <a@b.com>',
    'a..b@c.com',
    'a!b@c.com',
    '"Doe, \\"J\\"" <a@b.com>',
    '"Doe\u202E" <a@b.com>',
    'a@the\uFEFFscoop.com',
  ])('when the sender is %j, then it is not plain and the parser decides', (sender) => {
    expect(plainRoutingKey(sender)).toBeUndefined();
  });
});
