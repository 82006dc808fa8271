import fc from 'fast-check';
import { z } from 'zod';
import {
  parseAuthenticationResults,
  sameAuthservId,
  type AuthResult,
  type AuthenticationResults,
} from '../../src/core/authentication-results';

// What a header read must be, whatever the input: an authserv-id that is not empty, versions that
// are whole numbers of 0 or more, strings everywhere else, and no field the type does not name.
const version = z.number().int().nonnegative().optional();
const readHeader = z.strictObject({
  authserv_id: z.string().min(1),
  version,
  results: z.array(
    z.strictObject({
      method: z.string(),
      method_version: version,
      result: z.string(),
      reason: z.string().optional(),
      properties: z.record(z.string(), z.string()),
    }),
  ),
});

function parsed(value: string): AuthenticationResults {
  const result = parseAuthenticationResults(value);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(value)} to parse, got: ${result.reason}`);
  return result.header;
}

/** The results as plain objects, so null-prototype property maps compare like literals. */
function plain(header: AuthenticationResults): AuthenticationResults {
  return JSON.parse(JSON.stringify(header)) as AuthenticationResults;
}

function r(method: string, result: string, properties: Record<string, string> = {}, extra: Partial<AuthResult> = {}): AuthResult {
  return { method, result, properties, ...extra };
}

// Each vector: what it is, the raw value, the authserv-id, the version (if any) and the results.
type WellFormed = [name: string, value: string, authservId: string, version: number | undefined, results: AuthResult[]];

const WELL_FORMED: WellFormed[] = [
  ['no result ("none")', 'mx.thescoop.com; none', 'mx.thescoop.com', undefined, []],
  ['"none" in uppercase with a trailing ";"', 'mx.thescoop.com;NONE;', 'mx.thescoop.com', undefined, []],
  ['a version before "none"', 'mx.thescoop.com 1; none', 'mx.thescoop.com', 1, []],
  [
    'a version and a comment after the authserv-id',
    'mx.thescoop.com (Postfix) 1 (v1); dmarc=pass',
    'mx.thescoop.com',
    1,
    [r('dmarc', 'pass')],
  ],
  [
    'a quoted authserv-id',
    '"mx.thescoop.com"; spf=pass smtp.mailfrom=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('spf', 'pass', { 'smtp.mailfrom': 'thescoop.com' })],
  ],
  ['a quoted authserv-id with an escaped quote', '"mx \\"one\\""; dmarc=none', 'mx "one"', undefined, [r('dmarc', 'none')]],
  [
    'several results',
    'mx.thescoop.com; spf=pass smtp.mailfrom=mara@thescoop.com; dkim=pass header.d=thescoop.com; dmarc=pass header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [
      r('spf', 'pass', { 'smtp.mailfrom': 'mara@thescoop.com' }),
      r('dkim', 'pass', { 'header.d': 'thescoop.com' }),
      r('dmarc', 'pass', { 'header.from': 'thescoop.com' }),
    ],
  ],
  [
    'dmarc=fail and dmarc=pass in the same header, both kept in order',
    'mx.thescoop.com; dmarc=fail header.from=thescoop.com; dmarc=pass header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'fail', { 'header.from': 'thescoop.com' }), r('dmarc', 'pass', { 'header.from': 'thescoop.com' })],
  ],
  [
    'comments everywhere',
    '(a) mx.thescoop.com (b) ; (c) spf (d) = (e) pass (f) smtp (g) . (h) mailfrom (i) = (j) mara@thescoop.com (k) ; (l) dmarc=pass (m)',
    'mx.thescoop.com',
    undefined,
    [r('spf', 'pass', { 'smtp.mailfrom': 'mara@thescoop.com' }), r('dmarc', 'pass')],
  ],
  [
    'nested comments',
    'mx.thescoop.com; dmarc=fail (outer (inner (innermost) dmarc=pass) still; comment) header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'fail', { 'header.from': 'thescoop.com' })],
  ],
  [
    'an escaped ")" inside a comment',
    'mx.thescoop.com; dmarc=fail (x \\) ; dmarc=pass) header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'fail', { 'header.from': 'thescoop.com' })],
  ],
  [
    'a quote inside a comment is plain text',
    'mx.thescoop.com; dmarc=fail (say "hi) header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'fail', { 'header.from': 'thescoop.com' })],
  ],
  [
    'a quoted ")" inside a property value',
    'mx.thescoop.com; dkim=fail header.b="Ab)c; dmarc=pass (" header.d=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dkim', 'fail', { 'header.b': 'Ab)c; dmarc=pass (', 'header.d': 'thescoop.com' })],
  ],
  [
    'a quoted reason holding ";" and ")"',
    'mx.thescoop.com; dmarc=fail reason="policy) ; dmarc=pass (x" header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'fail', { 'header.from': 'thescoop.com' }, { reason: 'policy) ; dmarc=pass (x' })],
  ],
  [
    'a quoted reason with an escaped quote',
    'mx.thescoop.com; spf=fail reason="not \\"authorized\\""',
    'mx.thescoop.com',
    undefined,
    [r('spf', 'fail', {}, { reason: 'not "authorized"' })],
  ],
  [
    'an unquoted reason',
    'mx.thescoop.com; compauth=pass reason=100',
    'mx.thescoop.com',
    undefined,
    [r('compauth', 'pass', {}, { reason: '100' })],
  ],
  [
    'uppercase methods, results and property names',
    'mx.thescoop.com; DMARC=PASS HEADER.FROM=TheScoop.com; SPF=Pass',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'pass', { 'header.from': 'TheScoop.com' }), r('spf', 'pass')],
  ],
  [
    'a method version',
    'mx.thescoop.com; dkim/1=pass header.d=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dkim', 'pass', { 'header.d': 'thescoop.com' }, { method_version: 1 })],
  ],
  [
    'a method version with spaces around it',
    'mx.thescoop.com; dkim / 2 = pass',
    'mx.thescoop.com',
    undefined,
    [r('dkim', 'pass', {}, { method_version: 2 })],
  ],
  [
    'unknown methods',
    'mx.thescoop.com; x-tls=pass smtp.version=TLSv1.3; iprev=pass policy.iprev=192.0.2.1; auth=pass smtp.auth=mara; arc=none; bimi=skipped',
    'mx.thescoop.com',
    undefined,
    [
      r('x-tls', 'pass', { 'smtp.version': 'TLSv1.3' }),
      r('iprev', 'pass', { 'policy.iprev': '192.0.2.1' }),
      r('auth', 'pass', { 'smtp.auth': 'mara' }),
      r('arc', 'none'),
      r('bimi', 'skipped'),
    ],
  ],
  [
    'policy.* ptypes',
    'mx.thescoop.com; dmarc=pass policy.published-domain-policy=reject policy.applied-disposition=none header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [
      r('dmarc', 'pass', {
        'policy.published-domain-policy': 'reject',
        'policy.applied-disposition': 'none',
        'header.from': 'thescoop.com',
      }),
    ],
  ],
  [
    'a quoted local part before "@domain"',
    'mx.thescoop.com; spf=pass smtp.mailfrom="mara lee"@thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('spf', 'pass', { 'smtp.mailfrom': 'mara lee@thescoop.com' })],
  ],
  [
    'an empty property value',
    'mx.thescoop.com; spf=none smtp.mailfrom=; dkim=none',
    'mx.thescoop.com',
    undefined,
    [r('spf', 'none', { 'smtp.mailfrom': '' }), r('dkim', 'none')],
  ],
  [
    'a value folded with CRLF and a tab',
    'mx.thescoop.com;\r\n\tdmarc=pass\r\n\t header.from=thescoop.com',
    'mx.thescoop.com',
    undefined,
    [r('dmarc', 'pass', { 'header.from': 'thescoop.com' })],
  ],
  ['a value folded with LF alone', 'mx.thescoop.com;\n dmarc=pass', 'mx.thescoop.com', undefined, [r('dmarc', 'pass')]],
  [
    'UTF-8 in a comment and a quoted value',
    'mx.thescoop.com; dkim=pass (clé vérifiée) header.s="sélecteur"',
    'mx.thescoop.com',
    undefined,
    [r('dkim', 'pass', { 'header.s': 'sélecteur' })],
  ],
  [
    'two DKIM results, one per signature',
    'mx.thescoop.com; dkim=pass header.d=thescoop.com header.s=s1; dkim=fail header.d=thescoop.com header.s=s2',
    'mx.thescoop.com',
    undefined,
    [
      r('dkim', 'pass', { 'header.d': 'thescoop.com', 'header.s': 's1' }),
      r('dkim', 'fail', { 'header.d': 'thescoop.com', 'header.s': 's2' }),
    ],
  ],
  // Real-world headers, with their addresses and signatures replaced.
  [
    'Gmail',
    'mx.google.com;\r\n       dkim=pass header.i=@thescoop.com header.s=google header.b=Ab1+Cd/2;\r\n       spf=pass (google.com: domain of mara@thescoop.com designates 209.85.220.41 as permitted sender) smtp.mailfrom=mara@thescoop.com;\r\n       dmarc=pass (p=QUARANTINE sp=QUARANTINE dis=NONE) header.from=thescoop.com',
    'mx.google.com',
    undefined,
    [
      r('dkim', 'pass', { 'header.i': '@thescoop.com', 'header.s': 'google', 'header.b': 'Ab1+Cd/2' }),
      r('spf', 'pass', { 'smtp.mailfrom': 'mara@thescoop.com' }),
      r('dmarc', 'pass', { 'header.from': 'thescoop.com' }),
    ],
  ],
  [
    'Gmail with an ARC result whose comment holds results',
    'mx.google.com;\r\n       arc=pass (i=1 spf=pass spfdomain=thescoop.com dkim=pass dkdomain=thescoop.com dmarc=pass fromdomain=thescoop.com);\r\n       spf=pass (google.com: domain of list@lists.example.org designates 192.0.2.7 as permitted sender) smtp.mailfrom=list@lists.example.org',
    'mx.google.com',
    undefined,
    [r('arc', 'pass'), r('spf', 'pass', { 'smtp.mailfrom': 'list@lists.example.org' })],
  ],
  [
    'Fastmail (Authentication Milter), with its non-RFC items',
    'mx3.messagingengine.com;\r\n    dkim=pass (2048-bit rsa key sha256) header.d=thescoop.com header.i=@thescoop.com header.b=Ab1Cd2Ef header.a=rsa-sha256 header.s=fm1 x-bits=2048;\r\n    dmarc=pass policy.published-domain-policy=reject policy.applied-disposition=none policy.evaluated-disposition=none (p=reject,d=none,d.eval=none) policy.policy-from=p header.from=thescoop.com;\r\n    iprev=pass smtp.remote-ip=192.0.2.10 (mail.thescoop.com);\r\n    spf=pass smtp.mailfrom=mara@thescoop.com smtp.helo=mail.thescoop.com;\r\n    x-aligned-from=pass (Address match);\r\n    x-return-mx=pass header.domain=thescoop.com policy.is_org=yes (MX Records found: mx1.thescoop.com,mx2.thescoop.com);\r\n    x-tls=pass smtp.version=TLSv1.3 smtp.cipher=TLS_AES_256_GCM_SHA384 smtp.bits=256/256;\r\n    x-vs=clean score=-100 state=0',
    'mx3.messagingengine.com',
    undefined,
    [
      r('dkim', 'pass', {
        'header.d': 'thescoop.com',
        'header.i': '@thescoop.com',
        'header.b': 'Ab1Cd2Ef',
        'header.a': 'rsa-sha256',
        'header.s': 'fm1',
        'x-bits': '2048',
      }),
      r('dmarc', 'pass', {
        'policy.published-domain-policy': 'reject',
        'policy.applied-disposition': 'none',
        'policy.evaluated-disposition': 'none',
        'policy.policy-from': 'p',
        'header.from': 'thescoop.com',
      }),
      r('iprev', 'pass', { 'smtp.remote-ip': '192.0.2.10' }),
      r('spf', 'pass', { 'smtp.mailfrom': 'mara@thescoop.com', 'smtp.helo': 'mail.thescoop.com' }),
      r('x-aligned-from', 'pass'),
      r('x-return-mx', 'pass', { 'header.domain': 'thescoop.com', 'policy.is_org': 'yes' }),
      r('x-tls', 'pass', { 'smtp.version': 'TLSv1.3', 'smtp.cipher': 'TLS_AES_256_GCM_SHA384', 'smtp.bits': '256/256' }),
      r('x-vs', 'clean', { score: '-100', state: '0' }),
    ],
  ],
  [
    'Postfix + OpenDKIM',
    'mail.thescoop.com;\r\n\tdkim=pass (2048-bit key; unprotected) header.d=thescoop.com header.i=@thescoop.com header.a=rsa-sha256 header.s=mail header.b="Ab1Cd2Ef";\r\n\tdkim-atps=neutral',
    'mail.thescoop.com',
    undefined,
    [
      r('dkim', 'pass', {
        'header.d': 'thescoop.com',
        'header.i': '@thescoop.com',
        'header.a': 'rsa-sha256',
        'header.s': 'mail',
        'header.b': 'Ab1Cd2Ef',
      }),
      r('dkim-atps', 'neutral'),
    ],
  ],
  [
    'Postfix + OpenDMARC',
    'mail.thescoop.com; dmarc=pass (p=reject dis=none) header.from=thescoop.com',
    'mail.thescoop.com',
    undefined,
    [r('dmarc', 'pass', { 'header.from': 'thescoop.com' })],
  ],
  [
    'Postfix + policyd-spf',
    'mail.thescoop.com; spf=pass (sender SPF authorized) smtp.mailfrom=thescoop.com (client-ip=192.0.2.10; helo=mail.thescoop.com)',
    'mail.thescoop.com',
    undefined,
    [r('spf', 'pass', { 'smtp.mailfrom': 'thescoop.com' })],
  ],
  [
    'Rspamd',
    'mx.thescoop.com;\n\tdkim=pass header.d=thescoop.com header.s=dkim header.b=abcdEFGH;\n\tdmarc=pass (policy=reject) header.from=thescoop.com;\n\tspf=pass (mx.thescoop.com: domain of mara@thescoop.com designates 192.0.2.10 as permitted sender) smtp.mailfrom=mara@thescoop.com',
    'mx.thescoop.com',
    undefined,
    [
      r('dkim', 'pass', { 'header.d': 'thescoop.com', 'header.s': 'dkim', 'header.b': 'abcdEFGH' }),
      r('dmarc', 'pass', { 'header.from': 'thescoop.com' }),
      r('spf', 'pass', { 'smtp.mailfrom': 'mara@thescoop.com' }),
    ],
  ],
  [
    'Exim',
    'mx.thescoop.com; iprev=pass (mail.example.org) smtp.remote-ip=192.0.2.1; spf=pass smtp.mailfrom=example.org; dkim=pass header.d=example.org header.s=sel header.a=rsa-sha256; dmarc=pass header.from=example.org',
    'mx.thescoop.com',
    undefined,
    [
      r('iprev', 'pass', { 'smtp.remote-ip': '192.0.2.1' }),
      r('spf', 'pass', { 'smtp.mailfrom': 'example.org' }),
      r('dkim', 'pass', { 'header.d': 'example.org', 'header.s': 'sel', 'header.a': 'rsa-sha256' }),
      r('dmarc', 'pass', { 'header.from': 'example.org' }),
    ],
  ],
  [
    'Yahoo, with a comment glued to the result and a trailing ";"',
    'atlas-production.v2-mail-prod1-gq1.omega.yahoo.com; dkim=pass header.i=@thescoop.com header.s=s1; spf=pass smtp.mailfrom=thescoop.com; dmarc=pass(p=REJECT sp=REJECT dis=NONE) header.from=thescoop.com;',
    'atlas-production.v2-mail-prod1-gq1.omega.yahoo.com',
    undefined,
    [
      r('dkim', 'pass', { 'header.i': '@thescoop.com', 'header.s': 's1' }),
      r('spf', 'pass', { 'smtp.mailfrom': 'thescoop.com' }),
      r('dmarc', 'pass', { 'header.from': 'thescoop.com' }),
    ],
  ],
  [
    'Proton Mail',
    'mailin036.protonmail.ch; dkim=pass (Good 2048 bit rsa-sha256 signature) header.d=thescoop.com header.i=@thescoop.com header.a=rsa-sha256; dmarc=pass (p=reject dis=none) header.from=thescoop.com',
    'mailin036.protonmail.ch',
    undefined,
    [
      r('dkim', 'pass', { 'header.d': 'thescoop.com', 'header.i': '@thescoop.com', 'header.a': 'rsa-sha256' }),
      r('dmarc', 'pass', { 'header.from': 'thescoop.com' }),
    ],
  ],
  [
    'iCloud, one authserv-id per method',
    'dmarc.icloud.com; dmarc=pass header.from=thescoop.com',
    'dmarc.icloud.com',
    undefined,
    [r('dmarc', 'pass', { 'header.from': 'thescoop.com' })],
  ],
];

// Each vector: what is wrong, the raw value, a phrase of the reason, and the authserv-id read before the failure.
type Malformed = [name: string, value: unknown, reason: RegExp, authservId: string | undefined];

const MALFORMED: Malformed[] = [
  ['it is empty', '', /no authserv-id/, undefined],
  ['it is only whitespace and a comment', '  (nothing) ', /no authserv-id/, undefined],
  ['it starts with ";"', '; dmarc=pass', /no authserv-id/, undefined],
  ['the quoted authserv-id is empty', '""; dmarc=pass', /no authserv-id/, undefined],
  ['the authserv-id is followed by nothing', 'mx.thescoop.com', /followed by no result/, 'mx.thescoop.com'],
  ['the ";" is followed by nothing', 'mx.thescoop.com;', /method name/, 'mx.thescoop.com'],
  ['the ";" is missing', 'mx.thescoop.com dmarc=pass', /";"/, 'mx.thescoop.com'],
  ['a method has no "="', 'mx.thescoop.com; dmarc', /"=" and a result/, 'mx.thescoop.com'],
  ['a method has no result', 'mx.thescoop.com; dmarc=', /result of dmarc/, 'mx.thescoop.com'],
  ['a result has no method', 'mx.thescoop.com; =pass', /method name/, 'mx.thescoop.com'],
  ['an empty result sits between two', 'mx.thescoop.com; spf=pass;; dmarc=pass', /method name/, 'mx.thescoop.com'],
  ['a result is glued to a property', 'mx.thescoop.com; spf=passsmtp.mailfrom=thescoop.com', /a property of spf/, 'mx.thescoop.com'],
  ['a comment is never closed', 'mx.thescoop.com; dmarc=pass (oops', /never closed/, 'mx.thescoop.com'],
  ['a nested comment is never closed', 'mx.thescoop.com; dmarc=pass ((inner) header.from=thescoop.com', /never closed/, 'mx.thescoop.com'],
  ['a comment ends in a lone backslash', 'mx.thescoop.com; dmarc=pass (x\\', /lone/, 'mx.thescoop.com'],
  ['an extra ")" closes nothing', 'mx.thescoop.com; dmarc=pass) header.from=thescoop.com', /found "\)/, 'mx.thescoop.com'],
  ['a quoted string is never closed', 'mx.thescoop.com; dmarc=fail reason="policy', /never closed/, 'mx.thescoop.com'],
  ['a quoted string ends in a lone backslash', 'mx.thescoop.com; dmarc=fail reason="policy\\', /lone/, 'mx.thescoop.com'],
  ['"none" is followed by a result', 'mx.thescoop.com; none; spf=pass', /only result/, 'mx.thescoop.com'],
  ['"none" follows a result', 'mx.thescoop.com; spf=pass; none', /only result/, 'mx.thescoop.com'],
  ['a property is given twice', 'mx.thescoop.com; dkim=pass header.d=evil.com header.d=thescoop.com', /header\.d twice/, 'mx.thescoop.com'],
  [
    'a property is given twice in different case',
    'mx.thescoop.com; dmarc=pass header.from=evil.com HEADER.From=thescoop.com',
    /header\.from twice/,
    'mx.thescoop.com',
  ],
  ['a result has two reasons', 'mx.thescoop.com; dmarc=fail reason=a reason=b', /two reasons/, 'mx.thescoop.com'],
  [
    'an empty value swallows the next property',
    'mx.thescoop.com; dmarc=pass header.x= header.from=evil.com',
    /found "=evil/,
    'mx.thescoop.com',
  ],
  ['a property has no value sign', 'mx.thescoop.com; dmarc=pass header.from', /"=" after header\.from/, 'mx.thescoop.com'],
  ['an item is neither a property nor key=value', 'mx.thescoop.com; dmarc=pass action none', /neither "\." nor "="/, 'mx.thescoop.com'],
  ['a method version is not a number', 'mx.thescoop.com; dkim/x=pass', /not a number/, 'mx.thescoop.com'],
  ['it holds NUL', 'mx.thescoop.com; dmarc=pass\u0000', /control character/, undefined],
  ['it holds a line break that is not folding', 'mx.thescoop.com; dmarc=fail\r\nX-Injected: dmarc=pass', /line break/, undefined],
  ['it holds a bare CR', 'mx.thescoop.com;\rdmarc=pass', /control character/, undefined],
  ['it holds DEL', 'mx.thescoop.com; dmarc=pass\u007f', /control character/, undefined],
  ['it holds a C1 control', 'mx.thescoop.com; dmarc=pass\u0085', /control character/, undefined],
  ['the authserv-id is not ASCII and unquoted', 'mx.théscoop.com; dmarc=pass', /";"/, 'mx.th'],
  ['it carries the field name', 'Authentication-Results: mx.thescoop.com; dmarc=pass', /";"/, 'Authentication-Results'],
  [
    "it is Microsoft 365's, which has no authserv-id",
    'spf=pass (sender IP is 40.107.22.1) smtp.mailfrom=thescoop.com; dkim=pass (signature was verified) header.d=thescoop.com;dmarc=pass action=none header.from=thescoop.com;compauth=pass reason=100',
    /";"/,
    'spf',
  ],
  [
    "it is Outlook.com's for an unsigned message",
    'spf=none (sender IP is 192.0.2.1) smtp.mailfrom=thescoop.com; dkim=none (message not signed) header.d=none;dmarc=none action=none header.from=thescoop.com;',
    /";"/,
    'spf',
  ],
  ['it is over the length limit', `mx.thescoop.com; dmarc=pass (${'x'.repeat(16_384)})`, /over 16384 characters/, undefined],
  ['it is not a string', 42, /not a string/, undefined],
];

describe('parseAuthenticationResults on well-formed headers', () => {
  test.each(WELL_FORMED)('when the header has %s, then it is read', (_name, value, authservId, version, results) => {
    const expected: AuthenticationResults =
      version === undefined ? { authserv_id: authservId, results } : { authserv_id: authservId, version, results };
    expect(plain(parsed(value))).toEqual(expected);
  });
});

describe('parseAuthenticationResults on malformed headers', () => {
  test.each(MALFORMED)('when %s, then it is refused and the reason says why', (_name, value, reason, authservId) => {
    const result = parseAuthenticationResults(value);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(reason);
    expect(result.authserv_id).toBe(authservId);
  });
});

describe('sameAuthservId', () => {
  test.each([
    ['they are equal', true, 'mx.thescoop.com', 'mx.thescoop.com'],
    ['they differ in ASCII case', true, 'MX.TheScoop.COM', 'mx.thescoop.com'],
    ['one is a subdomain of the other', false, 'evil.mx.thescoop.com', 'mx.thescoop.com'],
    ['one has a suffix', false, 'mx.thescoop.com.evil.com', 'mx.thescoop.com'],
    ['one has a trailing dot', false, 'mx.thescoop.com.', 'mx.thescoop.com'],
    ['one has a KELVIN SIGN where the other has k', false, 'mx.\u212Aiosk.example', 'mx.kiosk.example'],
    ['one has a dotless i where the other has i', false, 'mx.k\u0131osk.example', 'mx.kiosk.example'],
    ['one has a capital I with a dot where the other has i', false, 'MX.\u0130stanbul.example', 'mx.istanbul.example'],
    ['they differ in ASCII case beside a letter beyond ASCII', true, 'MX.M\u00FCnchen.example', 'mx.m\u00FCnchen.example'],
    ['both are empty', false, '', ''],
  ])('when %s, then they name the same server: %s', (_name, same, a, b) => {
    expect(sameAuthservId(a, b)).toBe(same);
  });
});

// Generated headers: a structure, written out with arbitrary whitespace, folding and comments.
const cfws = fc.constantFrom('', ' ', '\t', ' (c) ', '(a (nested) one)', ' (x \\) y) ', '\r\n\t', '\n ', ' ("quote) ');
const sep = fc.constantFrom(' ', '\t', ' (c) ', '(a (b) c)', '\r\n ', ' (x \\( y) ');
const printable = fc.string({ unit: fc.constantFrom(...'abcXYZ019 ;=().@"\\/-_é'.split('')), maxLength: 12 });
const keyword = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,8}$/);
const propertyName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,8}$/);
const bareValue = fc.stringMatching(/^[A-Za-z0-9@./+:_-]{1,12}$/);

function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

interface Written {
  text: string;
  value: string;
}

const pvalue: fc.Arbitrary<Written> = fc.oneof(
  bareValue.map((v) => ({ text: v, value: v })),
  printable.map((v) => ({ text: quote(v), value: v })),
);

const resinfo = fc
  .record({
    method: keyword.filter((m) => m.toLowerCase() !== 'none'),
    version: fc.option(fc.nat(99), { nil: undefined }),
    result: keyword,
    reason: fc.option(pvalue, { nil: undefined }),
    properties: fc.uniqueArray(fc.record({ ptype: propertyName, property: propertyName, value: pvalue }), {
      maxLength: 4,
      selector: (p) => `${p.ptype}.${p.property}`.toLowerCase(),
    }),
    gaps: fc.array(cfws, { minLength: 8, maxLength: 8 }),
    seps: fc.array(sep, { minLength: 6, maxLength: 6 }),
  })
  .map((g) => {
    const [a = '', b = '', c = '', d = '', e = '', f = '', h = '', i = ''] = g.gaps;
    const at = (n: number) => g.seps[n % g.seps.length] ?? ' ';
    let text = `${a}${g.method}${b}`;
    if (g.version !== undefined) text += `/${c}${g.version}${d}`;
    text += `=${e}${g.result}`;
    if (g.reason !== undefined) text += `${at(0)}reason${f}=${h}${g.reason.text}`;
    g.properties.forEach((p, n) => {
      text += `${at(n + 1)}${p.ptype}${i}.${i}${p.property}${i}=${i}${p.value.text}`;
    });
    const expected: AuthResult = {
      method: g.method.toLowerCase(),
      result: g.result.toLowerCase(),
      properties: Object.fromEntries(g.properties.map((p) => [`${p.ptype}.${p.property}`.toLowerCase(), p.value.value])),
    };
    if (g.version !== undefined) expected.method_version = g.version;
    if (g.reason !== undefined) expected.reason = g.reason.value;
    return { text: `${text}${a}`, expected };
  });

const header = fc
  .record({
    id: fc.oneof(
      fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,15}$/).map((v) => ({ text: v, value: v })),
      printable.filter((v) => v !== '').map((v) => ({ text: quote(v), value: v })),
    ),
    version: fc.option(fc.nat(9), { nil: undefined }),
    results: fc.array(resinfo, { maxLength: 4 }),
    lead: cfws,
    idSep: sep,
  })
  .map((g) => {
    const version = g.version === undefined ? '' : `${g.idSep}${g.version}`;
    const body = g.results.length === 0 ? '; none' : g.results.map((x) => `;${x.text}`).join('');
    const expected: AuthenticationResults = { authserv_id: g.id.value, results: g.results.map((x) => x.expected) };
    if (g.version !== undefined) expected.version = g.version;
    return { text: `${g.lead}${g.id.text}${version}${body}`, expected };
  });

describe('parseAuthenticationResults properties', () => {
  test('when a header is written with any whitespace, folding and comments, then it reads back as written', () => {
    fc.assert(
      fc.property(header, ({ text, expected }) => {
        expect(plain(parsed(text))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  test('when the input is any string, then it never throws and any header it reads has the shape its type declares', () => {
    const anyText = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.string({ unit: fc.constantFrom(...'mx.; =()"\\/@dmarcpassfilnone1 \t\r\n'.split('')), maxLength: 80 }),
      header.map((h) => h.text),
    );
    fc.assert(
      fc.property(anyText, fc.nat(200), (text, cut) => {
        for (const input of [text, text.slice(0, cut)]) {
          const result = parseAuthenticationResults(input);
          if (result.ok) expect(readHeader.safeParse(result.header).error).toBeUndefined();
          else expect(typeof result.reason).toBe('string');
        }
      }),
      { numRuns: 1000 },
    );
  });
});
