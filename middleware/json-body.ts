// JSON bodies with a size cap, turning the parser's failures into the HTTP.md errors
// (400 invalid_json, 413 payload_too_large) instead of its HTML pages.
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { HttpError, InvalidJsonError, PayloadTooLargeError } from '../src/errors';

export function jsonBody(options: { limit: string }): [RequestHandler, ErrorRequestHandler] {
  const parser = express.json({ limit: options.limit, strict: false });
  return [
    parser,
    function jsonBodyErrors(err: unknown, _req: Request, _res: Response, next: NextFunction) {
      const type = (err as { type?: unknown }).type;
      if (type === 'entity.too.large') return next(new PayloadTooLargeError(options.limit));
      if (type === 'entity.parse.failed') return next(new InvalidJsonError());
      if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
        return next(new HttpError(415, 'unsupported_media_type', 'The body must be UTF-8 JSON: send Content-Type: application/json; charset=utf-8.'));
      }
      return next(err);
    },
  ];
}
