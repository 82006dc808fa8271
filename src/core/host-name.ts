// The limits every routing key keeps, shared by the RFC 5322 path (routing-key.ts) and the fast
// path for plain addresses (plain-routing-key.ts), so the two cannot drift apart.

/** The longest address, raw or as a key (RFC 5321: 64 + 1 + 255, rounded as the legacy API did). */
export const MAX_ADDRESS_LENGTH = 320;

const MAX_DOMAIN_LENGTH = 253;
// Dot-separated LDH labels (RFC 5321 §4.1.2, RFC 1035 §2.3.4): each 1 to 63 letters, digits and
// inner hyphens. One expression, not a split: it runs on every gated request.
const HOST_LABELS = /^(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

/** Whether a lowercase ASCII domain is a host name: at most 253 characters of LDH labels. */
export function isHostName(domain: string): boolean {
  return domain.length <= MAX_DOMAIN_LENGTH && HOST_LABELS.test(domain);
}

/** The local part cut at its first "+": `mara+billing` → `mara`. */
export function tagStripped(local: string): string {
  const plus = local.indexOf('+');
  return plus === -1 ? local : local.slice(0, plus);
}
