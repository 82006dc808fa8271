// Reading an HTML form's fields (express.urlencoded, not extended: each value a string, or a list
// when a name repeats), and turning a refusal's issues into messages per field.
import type { Request, Response } from 'express';
import { ConflictError, ValidationError } from '../../errors';
import type { FieldErrors } from './views/form';
import type { PageContext } from './views/layout';

type Body = Record<string, string | string[] | undefined>;

function body(req: Request): Body {
  return (req.body ?? {}) as Body;
}

export function textField(req: Request, name: string): string {
  const value = body(req)[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

export function listField(req: Request, name: string): string[] {
  const value = body(req)[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function checkedField(req: Request, name: string): boolean {
  return body(req)[name] !== undefined;
}

export function queryText(req: Request, name: string): string {
  const value = req.query[name];
  return typeof value === 'string' ? value : '';
}

/**
 * A field per issue: the first name in the value (`member_tool_ids`, `pattern`), after `body` when
 * the form's own parse located it, else `form`.
 */
export function fieldErrors(err: ValidationError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of err.issues) {
    const [first] = err.located ? (issue.loc[0] === 'body' ? issue.loc.slice(1) : []) : issue.loc;
    const field = typeof first === 'string' ? first : 'form';
    (errors[field] ??= []).push(sentence(issue.msg));
  }
  return errors;
}

function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

/**
 * Runs a change. A refusal the form can show comes back as messages per field, with its status:
 * a validation error (422), or a conflict (409) put beside `conflictField` (a taken name, a rule
 * that exists). Anything else is thrown on to the error page.
 */
export async function attempt<T>(
  change: () => Promise<T>,
  conflictField?: string,
): Promise<{ ok: true; value: T } | { ok: false; status: number; errors: FieldErrors }> {
  try {
    return { ok: true, value: await change() };
  } catch (err) {
    if (err instanceof ValidationError) return { ok: false, status: 422, errors: fieldErrors(err) };
    if (err instanceof ConflictError && conflictField) return { ok: false, status: 409, errors: { [conflictField]: [err.message] } };
    throw err;
  }
}

/** What every page needs: where the dashboard is, the form token, and the last action's message. */
export function pageContext(req: Request): PageContext {
  const flash = req.session.flash;
  if (flash !== undefined) delete req.session.flash;
  return { base: req.baseUrl, csrfToken: req.csrfToken?.() ?? '', flash };
}

/** After a change: one message for the next page, then the page (303, so a reload does not resend). */
export async function redirectWith(req: Request, res: Response, path: string, flash: string): Promise<void> {
  req.session.flash = flash;
  // Stored before the 303 goes out: left to express-session, the session is written while the
  // response's last byte waits, and a browser that follows the redirect on its headers can read the
  // session before it holds the message.
  await new Promise<void>((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())));
  res.redirect(303, `${req.baseUrl}${path}`);
}

/** The agent a page of one agent's records asked for (`?agent=`), else the first, so the page always shows something. */
export function chosenAgent(req: Request, agents: readonly { id: number }[]): number | null {
  const id = Number(queryText(req, 'agent'));
  return agents.find((a) => a.id === id)?.id ?? agents[0]?.id ?? null;
}
