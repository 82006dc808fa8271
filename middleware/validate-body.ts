// validateBody(schema): parses the JSON body before the run is resolved, so a malformed message is
// a 422 naming the field rather than a refusal computed from half a message. The parsed value
// replaces req.body; the route reads it back with bodyOf().
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { parse } from '../src/http/parse';

export function validateBody(schema: z.ZodType): RequestHandler {
  return function validBody(req, _res, next) {
    req.body = parse(schema, req.body, 'body');
    next();
  };
}

/** The body validateBody(schema) parsed; the schema is named again only for its type. */
export function bodyOf<S extends z.ZodType>(req: Request, _schema: S): z.infer<S> {
  return req.body as z.infer<S>;
}
