// Text PostgreSQL can store (SEMANTICS §13): a lone UTF-16 surrogate has no UTF-8 form, and NUL has
// no place in a text or jsonb value; either fails the statement that writes it. What a caller sends
// is refused when it holds one (422, before anything runs); what a model or a tool wrote is made
// storable before it is stored: each lone surrogate and each NUL becomes U+FFFD.

import { INPUT_BOUNDS } from './input-bounds';

const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;
const UNSTORABLE_ALL = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/g;
/**
 * Past this depth a request body is not walked (a hostile body of nested brackets must not exhaust
 * the stack): the body parser refuses a deeper one before this runs (middleware/json-body.ts).
 */
const BODY_DEPTH: number = INPUT_BOUNDS.json_depth;

/** Whether a string holds a lone surrogate or a NUL. */
export function isUnstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * Where a JSON value first holds unstorable text, as a path of keys and indexes (a key that is
 * itself unstorable names the path to its object, then the key); null when it holds none.
 */
export function unstorableAt(value: unknown, maxDepth = BODY_DEPTH, depth = 0): (string | number)[] | null {
  if (typeof value === 'string') return isUnstorable(value) ? [] : null;
  if (value === null || typeof value !== 'object' || depth > maxDepth) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = unstorableAt(value[i], maxDepth, depth + 1);
      if (inner) return [i, ...inner];
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (isUnstorable(key)) return [key];
    const found = unstorableAt(inner, maxDepth, depth + 1);
    if (found) return [key, ...found];
  }
  return null;
}

/** The text with each lone surrogate and NUL replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\uFFFD') : text;
}

/**
 * A JSON value with every string (keys included) made storable, at any depth (it is about to be
 * written, which walks it whole anyway); the same value when none needs it.
 */
export function storableJson<T>(value: T): T {
  return unstorableAt(value, Infinity) === null ? value : (copyStorable(value) as T);
}

function copyStorable(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyStorable);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), copyStorable(v)]));
}
