// JSON bodies with a size cap, turning the parser's failures into the HTTP.md errors
// (400 invalid_json, 413 payload_too_large, 415 unsupported_media_type) instead of its HTML pages.
// A body it skips (not JSON: curl -d's form) passes on, since a router mounted at a host's root
// must let the host's own form posts through; a route that reads a body refuses it with a 415
// (unreadNonJsonBody). A body holding text that PostgreSQL cannot store (a lone UTF-16 surrogate,
// NUL), anywhere, keys included, is refused here with a 422, before any route reads it: nothing
// runs for it, on every route at once. So is a body nested deeper than any route reads (SEMANTICS
// §12b): 422 input_too_complex, before the Idempotency-Key's digest or a schema walks it.
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { INPUT_BOUNDS } from '../src/core/input-bounds';
import { tooDeepAt } from '../src/core/json-depth';
import { unstorableAt } from '../src/core/storable-text';
import {
  InputTooComplexError,
  InvalidJsonError,
  PayloadTooLargeError,
  ToolgateConfigError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../src/errors';

/** A size as body-parser reads it, kept to the forms it reads exactly (it takes "1 megabyte" as 1 byte). */
const BODY_LIMIT = /^\d+(?:\.\d+)? ?(?:b|kb|mb|gb)$/i;

/** Whether a body limit is a size body-parser reads as written: the library's option and the service's variable alike. */
export function isBodyLimit(limit: unknown): limit is string {
  return typeof limit === 'string' && BODY_LIMIT.test(limit) && Number.parseFloat(limit) > 0;
}

/** createToolgate's bodyLimit, checked (by its options schema); throws a ToolgateConfigError. */
export function checkBodyLimit(limit: unknown): string {
  if (!isBodyLimit(limit)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_BODY_LIMIT',
      `createToolgate({ bodyLimit: ${JSON.stringify(limit)} }) is not a size: give one such as "1mb", "512kb" or "100b".`,
    );
  }
  return limit;
}

/** Whether a request carries a body, read or not: chunked, or a Content-Length above 0. */
export function carriesBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * The 415 for a body no parser read (req.body undefined) because it is not JSON; undefined when
 * there is no such body. A body another parser of the host's read is the host's choice, and passes.
 */
export function unreadNonJsonBody(req: Request): UnsupportedMediaTypeError | undefined {
  if (req.body !== undefined || !carriesBody(req) || req.is('application/json')) return undefined;
  return new UnsupportedMediaTypeError({ contentType: req.get('content-type')?.trim() || undefined });
}

/** `limit` is checked already (checkBodyLimit). */
export function jsonBody(options: { limit: string }): [RequestHandler, ErrorRequestHandler, RequestHandler] {
  const parser = express.json({ limit: options.limit, strict: false });
  return [
    parser,
    function jsonBodyErrors(err: unknown, _req: Request, _res: Response, next: NextFunction) {
      const type = (err as { type?: unknown }).type;
      if (type === 'entity.too.large') return next(new PayloadTooLargeError(options.limit));
      if (type === 'entity.parse.failed') return next(new InvalidJsonError());
      if (type === 'encoding.unsupported' || type === 'charset.unsupported') return next(new UnsupportedMediaTypeError());
      return next(err);
    },
    function storableBody(req: Request, _res: Response, next: NextFunction) {
      next(tooDeepBody(req.body) ?? unstorableBody(req.body));
    },
  ];
}

/** The 422 for a parsed body nested deeper than INPUT_BOUNDS.json_depth; undefined when it is not. */
export function tooDeepBody(body: unknown): InputTooComplexError | undefined {
  const at = tooDeepAt(body, INPUT_BOUNDS.json_depth);
  if (at === null) return undefined;
  return new InputTooComplexError({
    bound: 'json_depth',
    detail: `The body nests arrays and objects more than ${INPUT_BOUNDS.json_depth} levels deep, deeper than any route reads: send a flatter body; nothing was run.`,
    loc: ['body', ...at],
  });
}

/** The 422 for a parsed body (JSON or a form) holding text that cannot be stored; undefined when it holds none. */
export function unstorableBody(body: unknown): ValidationError | undefined {
  const at = body === undefined ? null : unstorableAt(body);
  if (at === null) return undefined;
  const msg =
    'holds a lone UTF-16 surrogate or a NUL character, which cannot be stored: send well-formed Unicode text (a surrogate only as half of a pair) with no NUL';
  return new ValidationError([{ loc: ['body', ...at], msg, type: 'unstorable_text' }]);
}
