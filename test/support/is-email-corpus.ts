// Dominic Sayers' is_email test suite (tests.xml, BSD licence), as the email-addresses package ships
// it: 164 addresses sorted into valid, DNS warnings, RFC 5321 forms, comments and folding whitespace,
// deprecated forms, RFC 5322-only forms and errors.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';

export interface CorpusCase {
  id: number;
  address: string;
  category: string;
  diagnosis: string;
}

// The corpus writes control characters as the Unicode "symbol for" block (U+2400 + the code).
function decodeControls(text: string): string {
  return [...text]
    .map((c) => {
      const code = c.codePointAt(0) ?? 0;
      return code >= 0x2400 && code < 0x2420 ? String.fromCharCode(code - 0x2400) : c;
    })
    .join('');
}

export function loadIsEmailCorpus(): CorpusCase[] {
  const file = path.join(path.dirname(require.resolve('email-addresses/package.json')), 'test', 'tests.xml');
  const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, htmlEntities: true }).parse(
    readFileSync(file, 'utf8'),
  ) as {
    tests: { test: { '@_id': string; address?: string; category: string; diagnosis: string }[] };
  };
  return xml.tests.test.map((t) => ({
    id: Number(t['@_id']),
    address: decodeControls(typeof t.address === 'string' ? t.address : ''),
    category: t.category,
    diagnosis: t.diagnosis,
  }));
}
