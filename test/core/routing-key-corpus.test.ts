// routingKeyOf over a published corpus of email-address test cases: Dominic Sayers' is_email suite
// (tests.xml, BSD licence), as the email-addresses package ships it. It sorts 164 addresses into
// valid, DNS warnings, RFC 5321 forms (quoted strings, address literals), comments and folding
// whitespace, deprecated forms, RFC 5322-only forms (too long, domain literals) and errors.
//
// The baseline: an address the corpus calls usable (valid, DNS warning, RFC 5321, CFWS) has a key,
// and one it calls deprecated, RFC 5322-only or an error has none. Every case where toolgate
// differs is listed below with its reason; docs/DECISIONS.md carries the same list.
import { routingKeyOf } from '../../src/core/routing-key';
import { loadIsEmailCorpus, type CorpusCase } from '../support/is-email-corpus';

const USABLE = new Set(['ISEMAIL_VALID_CATEGORY', 'ISEMAIL_DNSWARN', 'ISEMAIL_RFC5321', 'ISEMAIL_CFWS']);

const RFC5321_NO_KEY = {
  numericTld: 'a numeric top-level label: URL parsing would read the domain as an IPv4 address',
  literal: 'an address literal: keys are host names, and no pattern can name an IP address',
  quotedEmpty: 'an empty quoted local part: nothing is left to match',
  quotedSpace: 'whitespace in a quoted local part: it reads as another address against patterns',
  folding: 'a CR or LF (folding whitespace): a sender with CR or LF has no key (SEMANTICS §3); unfold the header first',
};

/** Where toolgate departs from the baseline: true, a key the baseline would not give; false, none where it would. */
const DEVIATIONS: Record<number, { key: boolean; why: string }> = {
  23: { key: false, why: RFC5321_NO_KEY.numericTld },
  24: { key: false, why: RFC5321_NO_KEY.numericTld },
  61: { key: false, why: RFC5321_NO_KEY.literal },
  68: { key: false, why: RFC5321_NO_KEY.literal },
  71: { key: false, why: RFC5321_NO_KEY.literal },
  72: { key: false, why: RFC5321_NO_KEY.literal },
  75: { key: false, why: RFC5321_NO_KEY.literal },
  77: { key: false, why: RFC5321_NO_KEY.literal },
  79: { key: false, why: RFC5321_NO_KEY.literal },
  81: { key: false, why: RFC5321_NO_KEY.literal },
  43: { key: false, why: RFC5321_NO_KEY.quotedEmpty },
  55: { key: false, why: RFC5321_NO_KEY.quotedSpace },
  88: { key: false, why: RFC5321_NO_KEY.folding },
  144: { key: false, why: RFC5321_NO_KEY.folding },
  148: { key: false, why: RFC5321_NO_KEY.folding },
  153: { key: false, why: RFC5321_NO_KEY.folding },
  54: { key: true, why: 'an obsolete local part of quoted words ("test"."test"): the parser joins it into the one address it names' },
  56: { key: true, why: 'an obsolete local part of quoted words ("test".test): the parser joins it into the one address it names' },
  85: { key: true, why: 'whitespace beside the @ (obsolete): the address it names is unambiguous' },
  86: { key: true, why: 'whitespace beside the @ (obsolete): the address it names is unambiguous' },
  93: { key: true, why: 'a comment beside the @ (obsolete): comments are dropped, the address is unambiguous' },
  97: { key: true, why: 'a comment beside the @ (obsolete): comments are dropped, the address is unambiguous' },
  26: { key: true, why: 'a local part over 64 octets: only the 320-character limit of the key applies (SEMANTICS §3)' },
  39: { key: true, why: "over RFC 5321's 254 octets: only the 320-character limit of the key applies (SEMANTICS §3)" },
  35: { key: true, why: 'a trailing dot in the domain: dropped, so b@b.com. is b@b.com (SEMANTICS §3)' },
  160: { key: true, why: 'a quoted-pair of a non-ASCII character: RFC 6532 (internationalized mail) allows it' },
};

const corpus: CorpusCase[] = loadIsEmailCorpus();

describe('routing keys over the is_email corpus', () => {
  test('the corpus is there, whole: 164 cases in 7 categories', () => {
    expect(corpus).toHaveLength(164);
    expect(new Set(corpus.map((c) => c.category)).size).toBe(7);
  });

  test.each(corpus.map((c) => [c.id, c.diagnosis, JSON.stringify(c.address), c] as const))(
    'case %i (%s) %s has a key exactly as the baseline and the listed deviations say',
    (_id, _diagnosis, _shown, c) => {
      const expected = DEVIATIONS[c.id]?.key ?? USABLE.has(c.category);
      const key = routingKeyOf(c.address);
      expect({ id: c.id, key: key !== null }).toEqual({ id: c.id, key: expected });
      if (key !== null) {
        // A key is lowercase, untagged, one @, no whitespace, and its domain a key's domain again.
        expect(key).toBe(key.toLowerCase());
        expect(key).toMatch(/^[^@\s+]+@[^@\s]+$/);
        const domain = key.slice(key.indexOf('@') + 1);
        expect(routingKeyOf(`x@${domain}`)).toBe(`x@${domain}`);
      }
    },
  );

  test('every listed deviation names a case of the corpus that departs from the baseline', () => {
    for (const [id, deviation] of Object.entries(DEVIATIONS)) {
      const c = corpus.find((x) => x.id === Number(id));
      expect(c).toBeDefined();
      expect({ id, departs: deviation.key !== USABLE.has(c!.category) }).toEqual({ id, departs: true });
    }
  });

  test('no address the corpus calls an error gets a key, but for the two listed', () => {
    const keyed = corpus.filter((c) => c.category === 'ISEMAIL_ERR' && routingKeyOf(c.address) !== null).map((c) => c.id);
    expect(keyed).toEqual([35, 160]);
  });

  test('the domains the URL parser would cut short have no key (test@iana/icann.org is case 161)', () => {
    expect(corpus.find((c) => c.id === 161)?.address).toBe('test@iana/icann.org');
    expect(routingKeyOf('test@iana/icann.org')).toBeNull();
  });
});
