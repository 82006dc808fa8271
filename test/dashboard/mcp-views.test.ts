// The page of a server's tools, rendered without a server or a database: what it does with a
// definition's JSON that a server wrote (keys in any order, nesting as deep as it likes).
import { renderToStaticMarkup } from 'preact-render-to-string';
import type { PinnedTool } from '../../src/mcp/pin-listing';
import type { PinnedDefinition } from '../../src/mcp/tool-definition';
import { McpToolsPage, type ServerRow } from '../../src/app/dashboard/views/mcp';

const SERVER: ServerRow = {
  name: 'freezer',
  transport: 'http',
  status: 'connected',
  tools: 0,
  held: 1,
  skipped: [],
  counts: { active: 0, held: 1, stale: 0 },
};

function held(pinned: PinnedDefinition, pending: PinnedDefinition): PinnedTool {
  return {
    server: 'freezer',
    tool_name: 'check_stock',
    tool_id: 'freezer__check_stock',
    digest: 'a'.repeat(64),
    definition: pinned,
    pending_digest: 'b'.repeat(64),
    pending_definition: pending,
    status: 'held',
  };
}

const render = (tool: PinnedTool) =>
  renderToStaticMarkup(McpToolsPage({ ctx: { base: '/admin', csrfToken: 'token' }, server: SERVER, tools: [tool] }));

/** The text of the row of the side-by-side table whose header is `part`. */
function cells(html: string, part: string): string[] {
  const row = html.split('<tr').find((r) => r.includes(`<th scope="row">${part}`))!;
  return [...row.matchAll(/<pre class="definition">([\s\S]*?)<\/pre>/g)].map((m) => m[1]!);
}

test('when the two definitions hold one schema with its keys in another order, then both sides read alike, and it is not marked changed', () => {
  const html = render(
    held(
      {
        title: 'Stock',
        description: 'Old.',
        input_schema: { type: 'object', properties: { flavor: { type: 'string' } } },
        annotations: null,
      },
      {
        title: 'Stock',
        description: 'New.',
        input_schema: { properties: { flavor: { type: 'string' } }, type: 'object' },
        annotations: null,
      },
    ),
  );
  const [pinned, pending] = cells(html, 'Input schema');
  expect(pinned).toBe(pending);
  expect(cells(html, 'Description')).toEqual(['Old.', 'New.']);
  expect(html).toContain('Changed: description.');
});

test('when a schema nests deeper than the page lays out, then the page is still shown at once, that part on one line', () => {
  const started = Date.now();
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { inner: deep } };
  const html = render(
    held(
      { title: null, description: null, input_schema: { type: 'object' }, annotations: null },
      { title: null, description: null, input_schema: deep, annotations: null },
    ),
  );
  expect(Date.now() - started).toBeLessThan(2_000);
  const [, pending] = cells(html, 'Input schema');
  expect(pending!.startsWith('{&quot;type&quot;:&quot;object&quot;,&quot;properties&quot;:{&quot;inner&quot;:{&quot;type')).toBe(true);
  expect(pending!.includes('\n')).toBe(false);
});
