// Pages are preact components rendered to static HTML: every value is escaped by the renderer, and
// no page carries a script.
import type { Response } from 'express';
import type { VNode } from 'preact';
import { renderToStaticMarkup } from 'preact-render-to-string';

export function renderPage(res: Response, status: number, page: VNode): void {
  res
    .status(status)
    .type('html')
    .set('Cache-Control', 'no-store')
    .send(`<!doctype html>\n${renderToStaticMarkup(page)}`);
}
