// The dashboard's MCP pages: the servers with their connection and their tools' states, Refresh, a
// server's tools with a held tool's two definitions side by side and Accept, the toolkit form's
// marks for held and stale MCP tools; signed-out visitors refused; a server's description shown
// as text; and no `${VAR}` value of the configuration on any page. One MCP server in this process
// (the SDK's own), another configured at an address nothing answers.
import { createHash } from 'node:crypto';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { CHECK_STOCK_DESCRIPTION, startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { signedIn, visitor, type Visitor } from './session';

const TOKEN = `tok-${Math.random().toString(36).slice(2)}-bearer`;
const KEY = `key-${Math.random().toString(36).slice(2)}-url`;
const CELLAR_KEY = `cellar-${Math.random().toString(36).slice(2)}-secret`;
process.env.DASH_FREEZER_TOKEN = TOKEN;
process.env.DASH_FREEZER_KEY = KEY;
process.env.DASH_CELLAR_KEY = CELLAR_KEY;

const MARKUP = '<script>alert(1)</script> <b>Bold</b> checks the stock.';

let server: McpTestServer;
let t: TestApp;
let v: Visitor;
/** Every page's HTML, for the secrets check at the end. */
const pages: string[] = [];

beforeAll(async () => {
  server = await startMcpTestServer(TOKEN, KEY);
  t = await createTestApp({
    dashboard: true,
    mcp: {
      mcpServers: {
        freezer: {
          url: `${server.url}?key=\${DASH_FREEZER_KEY}`,
          headers: { Authorization: 'Bearer ${DASH_FREEZER_TOKEN}' },
          timeoutMs: 1_000,
        },
        // Port 9 (discard) answers nothing here: a server that stays unreachable.
        cellar: { url: 'http://127.0.0.1:9/mcp?key=${DASH_CELLAR_KEY}', headers: { 'X-Key': '${DASH_CELLAR_KEY}' }, timeoutMs: 1_000 },
      },
    },
  });
  v = await signedIn(t.app);
});

afterAll(async () => {
  await t.close();
  await server.close();
});

async function page(path: string) {
  const res = await v.get(path);
  pages.push(res.text);
  return res;
}

async function post(path: string, from: string, form: Record<string, string | string[]> = {}) {
  const res = await v.post(path, { _csrf: await v.token(from), ...form });
  pages.push(res.text);
  return res;
}

const apiTools = async () =>
  (await t.admin().get('/api/mcp/servers/freezer/tools').expect(200)).body as { id: string; status: string; pending_digest?: string }[];
const statusOf = async (id: string) => (await apiTools()).find((tool) => tool.id === id)?.status;

async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The cells of a table row whose header cell holds `name`. */
function row(html: string, name: string): string {
  const found = html.split('<tr').find((r) => r.includes(`<th scope="row">`) && r.includes(name));
  if (!found) throw new Error(`no row for ${name}`);
  return found;
}

/** A tool the server once listed, pinned in the database as if it had, which its next listing no longer gives. */
async function pinRetiredTool(): Promise<void> {
  const definition = { title: null, description: 'Logs the ice.', input_schema: { type: 'object' }, annotations: null };
  await t.sequelize.query(
    `INSERT INTO mcp_tools (server, tool_name, tool_id, digest, definition, status)
     VALUES ('freezer', 'ice_log', 'freezer__ice_log', :digest, :definition, 'active')`,
    { replacements: { digest: createHash('sha256').update('ice_log').digest('hex'), definition: JSON.stringify(definition) } },
  );
}

describe('the MCP servers page', () => {
  test('when an operator opens it, then it is in the sections, and each server shows its transport, status and tool counts', async () => {
    const res = await page('/admin/mcp');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/<a href="\/admin\/mcp" aria-current="page">MCP servers<\/a>/);
    const freezer = row(res.text, '/admin/mcp/servers/freezer');
    expect(freezer).toContain('Streamable HTTP');
    expect(freezer).toContain('<span class="badge connected">connected</span>');
    expect(freezer).toMatch(/3 active<\/li><li>0 held<\/li><li>0 stale<\/li>/);
    expect(freezer).toContain('action="/admin/mcp/servers/freezer/refresh"');
  });

  test('when a server cannot be reached, then it shows as unreachable with its last error', async () => {
    const cellar = row((await page('/admin/mcp')).text, '/admin/mcp/servers/cellar');
    expect(cellar).toContain('<span class="badge unreachable">unreachable</span>');
    expect(cellar).toMatch(/Last error: (<!-- -->)?could not connect/);
  });

  test('when Refresh is posted without its CSRF token, then it is refused and nothing is listed', async () => {
    await pinRetiredTool();
    const refused = await v.post('/admin/mcp/servers/freezer/refresh', {});
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('This form was not sent from a dashboard page');
    expect(row((await page('/admin/mcp')).text, '/admin/mcp/servers/freezer')).toContain('0 stale');
  });

  test('when an operator refreshes a server, then its tools are listed again, and a tool it no longer lists is stale', async () => {
    const res = await post('/admin/mcp/servers/freezer/refresh', '/admin/mcp');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/mcp');
    const after = await page('/admin/mcp');
    expect(after.text).toContain("freezer's tools were listed again: 3 active, 0 held, 1 stale.");
    expect(row(after.text, '/admin/mcp/servers/freezer')).toMatch(/3 active<\/li><li>0 held<\/li><li>1 stale<\/li>/);
    expect(await statusOf('freezer__ice_log')).toBe('stale');
  });

  test('when an operator refreshes a server that is unreachable, then the page says its tools stay as pinned', async () => {
    await post('/admin/mcp/servers/cellar/refresh', '/admin/mcp');
    expect((await page('/admin/mcp')).text).toContain('cellar is unreachable, so its tools stay as they were pinned');
  });

  test('when a page or a form names a server that is not configured, then it is a 404 that says where to pick one', async () => {
    const missing = await page('/admin/mcp/servers/nosuch');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('pick one from the MCP servers page');
    expect((await post('/admin/mcp/servers/nosuch/refresh', '/admin/mcp')).status).toBe(404);
  });
});

describe("a server's tools page", () => {
  test('when an operator opens it, then each tool shows its <server>__<tool> id, its name on the server where it differs, and its state', async () => {
    const res = await page('/admin/mcp/servers/freezer');
    expect(res.status).toBe(200);
    expect(row(res.text, 'freezer__check_stock')).toContain('<span class="badge active">active</span>');
    expect(row(res.text, 'freezer__melt_report')).toContain('its name on the server: <code>melt-report</code>');
    expect(row(res.text, 'freezer__ice_log')).toContain('<span class="badge stale">stale</span>');
    expect(row(res.text, 'freezer__ice_log')).toContain('its server no longer lists it');
    expect(res.text).not.toContain('/accept');
  });

  test("when a tool's definition changes, then it is held, and its pinned and pending definitions stand side by side, the changed part marked", async () => {
    server.describeCheckStock(MARKUP);
    await until(async () => (await statusOf('freezer__check_stock')) === 'held', 'the hold');
    const res = await page('/admin/mcp/servers/freezer');
    expect(row(res.text, 'freezer__check_stock')).toContain('<span class="badge held">held</span>');
    const section = res.text.slice(res.text.indexOf('<section aria-labelledby="held-freezer__check_stock">'));
    expect(section).toContain('Changed: description.');
    const description = row(section, 'Description');
    expect(description.startsWith(' class="changed">')).toBe(true);
    expect(description).toContain('<span class="badge changed">changed</span>');
    expect(description).toContain(CHECK_STOCK_DESCRIPTION);
    expect(description).toContain('&lt;script>alert(1)&lt;/script> &lt;b>Bold&lt;/b> checks the stock.');
    const title = row(section, 'Title');
    expect(title.startsWith('>')).toBe(true);
    expect(title).toContain('unchanged');
    expect(title.match(/Freezer stock/g)).toHaveLength(2);
    expect(row(section, 'Input schema')).toContain('&quot;flavor&quot;');
    expect(row(section, 'Annotations')).toContain('&quot;readOnlyHint&quot;: true');
    expect(section).toMatch(/action="\/admin\/mcp\/tools\/freezer__check_stock\/accept"/);
  });

  test("when a tool's description holds markup, then no page renders it: it is text", async () => {
    const res = await page('/admin/mcp/servers/freezer');
    expect(res.text).not.toContain('<script>alert(1)');
    expect(res.text).not.toContain('<b>Bold');
    expect(res.text).not.toContain('<script');
  });

  test('when the servers page shows a held tool, then its count says so', async () => {
    expect(row((await page('/admin/mcp')).text, '/admin/mcp/servers/freezer')).toMatch(
      /2 active<\/li><li class="held">1 held<\/li><li>1 stale<\/li>/,
    );
  });

  test('when the database fails while Accept pins the new definition, then it is a 503 page, and the tool stays held', async () => {
    const token = await v.token('/admin/mcp/servers/freezer');
    await t.sequelize.query('ALTER TABLE mcp_tools RENAME TO mcp_tools_away');
    let res;
    try {
      res = await v.post('/admin/mcp/tools/freezer__check_stock/accept', { _csrf: token });
    } finally {
      await t.sequelize.query('ALTER TABLE mcp_tools_away RENAME TO mcp_tools');
    }
    expect(res.status).toBe(503);
    expect(res.text).toContain('Nothing was granted.');
    expect(await statusOf('freezer__check_stock')).toBe('held');
    expect(row((await page('/admin/mcp/servers/freezer')).text, 'freezer__check_stock')).toContain('<span class="badge held">held</span>');
  });

  test('when Accept is posted without its CSRF token, then it is refused and the tool stays held', async () => {
    const refused = await v.post('/admin/mcp/tools/freezer__check_stock/accept', {});
    expect(refused.status).toBe(403);
    expect(await statusOf('freezer__check_stock')).toBe('held');
  });
});

describe("the toolkit form's checklist", () => {
  test('when an MCP tool is held, then the checklist lists it with a held mark and a link to its server, and it can still be a member', async () => {
    const form = await page('/admin/toolkits/new');
    expect(form.text).toMatch(
      /<label for="member-freezer__check_stock">Freezer stock (<!-- -->)?<span class="badge held">held<\/span><\/label>/,
    );
    expect(form.text).toContain('offered to no run until an operator accepts the new one on');
    expect(form.text).toContain(`<a href="/admin/mcp/servers/freezer">freezer's tools</a>`);
    expect(form.text).toMatch(/<label for="member-freezer__melt_report">melt-report<\/label>/);
    const created = await post('/admin/toolkits', '/admin/toolkits/new', { name: 'Freezer', member: ['freezer__check_stock'] });
    expect(created.status).toBe(303);
    expect((await t.tg.toolkits.list()).find((k) => k.name === 'Freezer')?.member_tool_ids).toEqual(['freezer__check_stock']);
  });

  test('when a member is an MCP tool its server no longer lists, then the form shows it checked, as stale for that reason', async () => {
    const kit = (await t.tg.toolkits.list()).find((k) => k.name === 'Freezer')!;
    await t.sequelize.query(`UPDATE toolkits SET member_tool_ids = array_append(member_tool_ids, 'freezer__ice_log') WHERE id = :id`, {
      replacements: { id: kit.id },
    });
    const form = await page(`/admin/toolkits/${kit.id}`);
    expect(form.text).toMatch(/<input type="checkbox" id="member-freezer__ice_log" name="member" value="freezer__ice_log" checked/);
    expect(form.text).toContain('freezer__ice_log (stale: its MCP server no longer lists it)');
    expect(form.text).not.toContain('freezer__ice_log (no longer registered)');
  });

  test('when the toolkits are listed, then a held MCP member and a stale one say so', async () => {
    const list = row((await page('/admin/toolkits')).text, '>Freezer</a>');
    expect(list).toContain('<li class="held">Freezer stock (held until accepted)</li>');
    expect(list).toContain('<li class="stale">freezer__ice_log (stale: its MCP server no longer lists it)</li>');
  });
});

describe('who may use the MCP pages', () => {
  test('when a visitor is not signed in, then the pages lead to sign-in, even with the admin token as a bearer token', async () => {
    const stranger = visitor(t.app);
    for (const path of ['/admin/mcp', '/admin/mcp/servers/freezer']) {
      const res = await stranger.get(path, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect([path, res.status]).toEqual([path, 303]);
      expect(res.headers.location).toMatch(/^\/admin\/sign-in\?next=/);
    }
  });

  test('when a visitor who is not signed in posts Accept or Refresh, then it is refused (401) and the tool stays held', async () => {
    const stranger = visitor(t.app);
    expect((await stranger.post('/admin/mcp/tools/freezer__check_stock/accept', {})).status).toBe(401);
    expect((await stranger.post('/admin/mcp/servers/freezer/refresh', {})).status).toBe(401);
    expect(await statusOf('freezer__check_stock')).toBe('held');
  });

  test('when a client token is presented to sign in, then it is refused, and the MCP pages stay closed', async () => {
    const client = visitor(t.app);
    const res = await client.post('/admin/sign-in', { _csrf: await client.token('/admin/sign-in'), token: CLIENT_TOKEN });
    expect(res.status).toBe(401);
    expect((await client.get('/admin/mcp')).status).toBe(303);
  });
});

describe('accepting a held tool', () => {
  test('when an operator accepts it, then its new definition is pinned, it is active, and the page says so', async () => {
    const res = await post('/admin/mcp/tools/freezer__check_stock/accept', '/admin/mcp/servers/freezer');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/mcp/servers/freezer');
    const after = await page('/admin/mcp/servers/freezer');
    expect(after.text).toContain("freezer__check_stock's new definition is pinned: it is active");
    expect(row(after.text, 'freezer__check_stock')).toContain('<span class="badge active">active</span>');
    expect(after.text).not.toContain('/accept');
    expect(await statusOf('freezer__check_stock')).toBe('active');
  });

  test("when the accepted description holds markup, then the toolkit form's summary shows it as text", async () => {
    const form = await page('/admin/toolkits/new');
    expect(form.text).toContain('&lt;script>alert(1)&lt;/script> &lt;b>Bold&lt;/b> checks the stock.');
    expect(form.text).not.toContain('<script');
  });

  test('when a tool is accepted again, then the page says it is not held, and nothing changes', async () => {
    const res = await post('/admin/mcp/tools/freezer__check_stock/accept', '/admin/mcp/servers/freezer');
    expect(res.status).toBe(303);
    expect((await page('/admin/mcp/servers/freezer')).text).toContain(
      'freezer__check_stock is not held: there is no new definition to accept.',
    );
  });

  test('when Accept names a tool no server has, then it is a 404', async () => {
    const res = await post('/admin/mcp/tools/freezer__no_such/accept', '/admin/mcp/servers/freezer');
    expect(res.status).toBe(404);
    expect(res.text).toContain("pick one from its server's tools page");
  });
});

describe("the configuration's secrets", () => {
  test("when a server's error quotes them, then no ${VAR} value appears on any page", async () => {
    server.echoing = true;
    try {
      await post('/admin/mcp/servers/freezer/refresh', '/admin/mcp');
      const servers = await page('/admin/mcp');
      expect(row(servers.text, '/admin/mcp/servers/freezer')).toContain('[redacted]');
      for (const path of ['/admin/mcp/servers/freezer', '/admin/mcp/servers/cellar', '/admin/toolkits', '/admin/toolkits/new'])
        expect([path, (await page(path)).status]).toEqual([path, 200]);
    } finally {
      server.echoing = false;
    }
    expect(pages.length).toBeGreaterThan(20);
    for (const html of pages) {
      expect(html).not.toContain(TOKEN);
      expect(html).not.toContain(KEY);
      expect(html).not.toContain(CELLAR_KEY);
    }
  });
});
