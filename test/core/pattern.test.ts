import { matchesPattern, parsePattern } from '../../src/core/pattern';

function reasonFor(input: unknown): string {
  const result = parsePattern(input);
  if (result.ok) throw new Error(`expected ${JSON.stringify(input)} to be rejected, got ${result.pattern}`);
  return result.reason;
}

describe('parsePattern rejections', () => {
  test.each([
    ['the pattern is empty', '', /is empty/],
    ['it has a second *', '*@*.thescoop.com', /more than one \*/],
    ['it has no @', '*thescoop.com', /has no @.*\*@thescoop\.com/],
    ['it has a second @', 'a@b@thescoop.com', /more than one @/],
    ['the local part is empty', '@thescoop.com', /nothing before the @/],
    ['the domain is empty', 'mara@', /nothing after the @/],
    ['the local part has a +tag', 'mara+billing@thescoop.com', /\+tag.*never match.*mara@thescoop\.com/],
    ['it contains a space', 'mara @thescoop.com', /whitespace/],
    ['it contains a line break', 'mara@thescoop.com\n', /control character/],
    ['it contains NUL', 'mara@thescoop.com\u0000', /control character/],
    ['it is over 320 characters', `${'a'.repeat(308)}@thescoop.com`, /over 320 characters/],
    ['it is pasted in angle brackets', '<mara@thescoop.com>', /bare address/],
    ['the domain cannot be converted to ASCII', 'mara@xn--zz.com', /cannot be converted to ASCII/],
    ['the domain is an IP literal', 'mara@[192.0.2.1]', /cannot hold.*IP address literals are not supported/],
    ['a label holding the * is not ASCII', 'mara@bü*.de', /must be plain ASCII/],
    ['the domain has two dots in a row', 'mara@thescoop..com', /empty label/],
    ['it is not a string', 42, /is a string/],
    // Hostile review, finding 8: the pattern's domain stopped at "/" and was stored as another one.
    ['the domain holds a slash', '*@thescoop.com/evil.org', /cannot be converted to ASCII as a host name/],
    ['the domain holds a question mark', 'mara@thescoop.com?x', /cannot be converted to ASCII as a host name/],
    ['a label starts with a hyphen', '*@-thescoop.com', /inner hyphens/],
    ['a label is over 63 characters once punycode', `*@${'ü'.repeat(60)}.de`, /at most 63 characters/],
    ['the domain holds an underscore', '*@the_scoop.com', /cannot be converted to ASCII as a host name/],
    // Issue 19, finding 8: no routing key holds an invisible character, so such a pattern matches none.
    ['the local part holds a right-to-left override', '\u202emoc.poocseht@aram', /invisible character U\+202E/],
    ['the domain holds a zero-width space', '*@the\u200Bscoop.com', /invisible character U\+200B/],
  ])('when %s, then it is rejected and the reason says why', (_name, input, phrase) => {
    expect(reasonFor(input)).toMatch(phrase);
  });

  test('when the pattern has a bare domain, then the reason suggests local@domain', () => {
    expect(reasonFor('thescoop.com')).toMatch(/write local@domain/);
  });
});

describe('parsePattern normalization', () => {
  test.each([
    ['* alone is kept', '*', '*'],
    ['case is lowered', 'Mara@TheScoop.COM', 'mara@thescoop.com'],
    ['an IDN domain becomes punycode', 'jane@Bücher.de', 'jane@xn--bcher-kva.de'],
    ['a trailing dot is dropped', '*@thescoop.com.', '*@thescoop.com'],
    ['a star label is kept while the others become punycode', 'mara@*.bücher.de', 'mara@*.xn--bcher-kva.de'],
    ['a look-alike domain becomes its own punycode', '*@\u0440\u0430ypal.com', '*@xn--ypal-43d9g.com'],
  ])('when %s, then the stored pattern is normalized', (_name, input, expected) => {
    expect(parsePattern(input)).toEqual({ ok: true, pattern: expected });
  });
});

describe('matchesPattern', () => {
  test.each([
    ['*', 'anyone@anywhere.org', true],
    ['mara@thescoop.com', 'mara@thescoop.com', true],
    ['mara@thescoop.com', 'jane@thescoop.com', false],
    ['*@thescoop.com', 'mara@thescoop.com', true],
    ['*@thescoop.com', 'x@evilthescoop.com', false],
    ['*@thescoop.com', 'x@sub.thescoop.com', false],
    ['*@thescoop.com', 'x@thescoop.com.evil.com', false],
    ['mara@*.thescoop.com', 'mara@eu.thescoop.com', true],
    ['mara@*.thescoop.com', 'mara@a.b.thescoop.com', true],
    ['mara@*.thescoop.com', 'mara@thescoop.com', false],
    ['mara@*.thescoop.com', 'jane@eu.thescoop.com', false],
    ['mara@*.thescoop.com', 'mara@evilthescoop.com', false],
    ['ma*@thescoop.com', 'ma@thescoop.com', false],
    ['ma*@thescoop.com', 'mara@thescoop.com', true],
    ['*@xn--ypal-43d9g.com', 'billing@paypal.com', false],
  ])('when %s is matched against %s, then the answer is %s', (pattern, key, expected) => {
    expect(matchesPattern(pattern, key)).toBe(expected);
  });

  test('when the star would have to cover an @, then it does not match', () => {
    expect(matchesPattern('mara@*', 'mara@a@b.com')).toBe(false);
  });

  test('when a stored pattern is not normalized, then matching with it throws, naming the normalized form', () => {
    expect(() => matchesPattern('Mara@TheScoop.com', 'mara@thescoop.com')).toThrow(/not normalized.*mara@thescoop\.com/);
  });
});
