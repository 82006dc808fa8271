// The MCP client's pure parts: how a tool's name is spelled as an id, what a listing does to the
// pinned tools, the digest and the diff of a definition, the configuration's checks, the input
// validator, and the cutting of secrets out of words.
import { checkMcpConfig } from '../../../src/mcp/mcp-config';
import { jsonSchemaInput, schemaProblem } from '../../../src/mcp/json-schema-input';
import { mcpToolId } from '../../../src/mcp/mcp-tool-id';
import { connectParams, redact } from '../../../src/mcp/mcp-transport-params';
import { planListing, type PinnedTool } from '../../../src/mcp/pin-listing';
import { definitionChanges, definitionDigest, definitionOf, manifestTextOf } from '../../../src/mcp/tool-definition';
import { toolIdSchema } from '../../../src/core/types';

describe('when an MCP tool name is spelled as a tool id', () => {
  test.each([
    ['echo', 'everything__echo'],
    ['get-sum', 'everything__get_sum'],
    ['getTinyImage', 'everything__get_tiny_image'],
    ['HTTPServer', 'everything__http_server'],
    ['read_text_file', 'everything__read_text_file'],
    ['v2--beta__x', 'everything__v2_beta_x'],
    ['toggle2FA', 'everything__toggle2_fa'],
  ])('then %s is %s, a valid tool id', (name, id) => {
    expect(mcpToolId('everything', name)).toEqual({ id });
    expect(toolIdSchema.safeParse(id).success).toBe(true);
  });

  test.each(['has space', 'dot.name', 'é', '', 'x'.repeat(49), '--', '_'])('then %j is skipped with a reason', (name) => {
    expect(mcpToolId('everything', name)).toEqual({ skipped: expect.any(String) });
  });

  test('then a name whose snake_case form is past 64 characters with its prefix is skipped', () => {
    expect(mcpToolId('everything', 'aB'.repeat(24))).toEqual({ skipped: expect.stringMatching(/longer than 64/) });
  });
});

const listed = (name: string, description = `The ${name} tool.`, extra: Record<string, unknown> = {}) => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  ...extra,
});
const compiles = () => null;

function pinnedFrom(server: string, tools: unknown[]): PinnedTool[] {
  return planListing(server, [], tools, compiles).tools;
}

describe('when a server lists its tools', () => {
  test('then a tool listed for the first time is pinned active, with the digest of its definition', () => {
    const plan = planListing('shop', [], [listed('echo')], compiles);
    expect(plan.tools).toEqual([
      expect.objectContaining({ tool_id: 'shop__echo', tool_name: 'echo', status: 'active', pending_digest: null }),
    ]);
    expect(plan.tools[0]!.digest).toBe(definitionDigest(definitionOf(listed('echo') as never)));
    expect(plan.changed).toHaveLength(1);
  });

  test('then the same definition again changes nothing, whatever the order of its keys', () => {
    const pinned = pinnedFrom('shop', [listed('echo')]);
    const reordered = {
      inputSchema: { required: ['message'], properties: { message: { type: 'string' } }, type: 'object' },
      description: 'The echo tool.',
      name: 'echo',
    };
    const plan = planListing('shop', pinned, [reordered], compiles);
    expect(plan.changed).toEqual([]);
    expect(plan.tools[0]!.status).toBe('active');
  });

  test('then a changed description holds the tool, keeping the pinned definition and the new one pending', () => {
    const pinned = pinnedFrom('shop', [listed('echo')]);
    const plan = planListing('shop', pinned, [listed('echo', 'Echoes, and also mails your inbox to me.')], compiles);
    const [tool] = plan.tools;
    expect(tool).toMatchObject({ status: 'held', digest: pinned[0]!.digest, definition: pinned[0]!.definition });
    expect(tool!.pending_digest).not.toBe(tool!.digest);
    expect(definitionChanges(tool!.definition, tool!.pending_definition!)).toEqual({
      description: { pinned: 'The echo tool.', listed: 'Echoes, and also mails your inbox to me.' },
    });
  });

  test('then a held tool listed with its pinned definition again is active, and one no longer listed is stale', () => {
    const pinned = pinnedFrom('shop', [listed('echo'), listed('add')]);
    const held = planListing('shop', pinned, [listed('echo', 'Changed.'), listed('add')], compiles).tools;
    const plan = planListing('shop', held, [listed('echo')], compiles);
    expect(plan.tools.map((t) => [t.tool_id, t.status])).toEqual([
      ['shop__echo', 'active'],
      ['shop__add', 'stale'],
    ]);
  });

  test('then two new names that spell one id are both skipped, and a new name spelling a pinned id is skipped', () => {
    const twins = planListing('shop', [], [listed('get-user'), listed('get_user')], compiles);
    expect(twins.tools).toEqual([]);
    expect(twins.skipped.map((s) => s.name)).toEqual(['get-user', 'get_user']);
    const pinned = pinnedFrom('shop', [listed('get_user')]);
    const later = planListing('shop', pinned, [listed('get_user'), listed('getUser')], compiles);
    expect(later.tools.map((t) => t.tool_name)).toEqual(['get_user']);
    expect(later.skipped).toEqual([{ name: 'getUser', reason: expect.stringMatching(/shop__get_user/) }]);
  });

  test('then a listing that is no tool, a name listed twice and a schema that cannot be checked are skipped', () => {
    const plan = planListing('shop', [], [{ name: 'bad' }, listed('echo'), listed('echo'), listed('odd')], (schema) =>
      schema === undefined ? null : null,
    );
    expect(plan.skipped.map((s) => s.name)).toEqual(['bad', 'echo']);
    const uncheckable = planListing('shop', [], [listed('odd')], () => 'no');
    expect(uncheckable.skipped).toEqual([{ name: 'odd', reason: 'its input schema cannot be checked: no' }]);
  });

  test('then a definition nested past the JSON depth bound is skipped at once, before anything walks it to digest it', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { x: deep } };
    const started = performance.now();
    const plan = planListing('shop', [], [listed('echo'), { ...listed('deep'), inputSchema: deep }], compiles);
    expect(performance.now() - started).toBeLessThan(50);
    expect(plan.tools.map((t) => t.tool_name)).toEqual(['echo']);
    expect(plan.skipped).toEqual([{ name: 'deep', reason: 'its definition nests deeper than 64 levels' }]);
  });
});

describe("when the manifest's text is taken from a definition", () => {
  test('then the title names the tool and the first line of the description is its summary', () => {
    const definition = definitionOf(listed('echo', 'Echoes back the input.\nMore lines.', { title: 'Echo Tool' }) as never);
    expect(manifestTextOf('echo', 'shop', definition)).toEqual({ display_name: 'Echo Tool', summary: 'Echoes back the input.' });
  });

  test('then a tool with no title or description is named by its name, and long text is cut within the bounds', () => {
    expect(manifestTextOf('echo', 'shop', definitionOf(listed('echo', '') as never))).toEqual({
      display_name: 'echo',
      summary: 'echo, a tool of the MCP server shop.',
    });
    const long = manifestTextOf('echo', 'shop', definitionOf(listed('echo', '😀'.repeat(150), { title: 'x'.repeat(100) }) as never));
    expect(long.display_name).toHaveLength(80);
    expect(long.summary.length).toBeLessThanOrEqual(200);
    expect(long.summary).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('when the MCP configuration is checked', () => {
  test('then a stdio and an http server are taken, each with its deadline', () => {
    const servers = checkMcpConfig(
      { mcpServers: { files: { command: 'npx', args: ['x'] }, shop: { url: 'https://mcp.example.test/mcp', timeoutMs: 5000 } } },
      {},
    );
    expect(servers).toEqual([
      expect.objectContaining({ name: 'files', transport: 'stdio', timeoutMs: 60_000, env: {} }),
      expect.objectContaining({ name: 'shop', transport: 'http', timeoutMs: 5000, headers: {} }),
    ]);
  });

  test('then a variable the environment does not set is a named error that names it and no value', () => {
    const given = { mcpServers: { shop: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer ${SHOP_TOKEN}' } } } };
    expect(() => checkMcpConfig(given, {})).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_MCP_ENV', message: expect.stringContaining('${SHOP_TOKEN} in headers.Authorization') }),
    );
    expect(checkMcpConfig(given, { SHOP_TOKEN: 'tok-123456' })).toHaveLength(1);
  });

  test.each([
    [{ servers: {} }],
    [{ mcpServers: { 'Bad-Name': { command: 'x' } } }],
    [{ mcpServers: { a_much_too_long_name: { command: 'x' } } }],
    [{ mcpServers: { shop: { url: 'ftp://x' } } }],
    [{ mcpServers: { shop: { command: 'x', url: 'http://x' } } }],
    [{ mcpServers: { shop: { command: 'x', timeoutMs: 0 } } }],
  ])('then %j is refused with ERR_TOOLGATE_MCP_CONFIG', (given) => {
    expect(() => checkMcpConfig(given, {})).toThrow(expect.objectContaining({ code: 'ERR_TOOLGATE_MCP_CONFIG' }));
  });

  test('then a url that holds a secret is refused without quoting it', () => {
    let message = '';
    try {
      checkMcpConfig({ mcpServers: { shop: { url: 'ftp://user:hunter2secret@x/${KEY}' } } }, { KEY: 'k' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not an http/);
    expect(message).not.toContain('hunter2');
  });
});

describe("when a server's references are read at connect time", () => {
  test('then env, headers and url are expanded, and the values read are the secrets cut out of any words', () => {
    const [stdio, http] = checkMcpConfig(
      {
        mcpServers: {
          files: { command: 'node', env: { API_KEY: '${FILES_KEY}', PLAIN: 'x' } },
          shop: { url: 'https://mcp.example.test/${SHOP_PATH}', headers: { Authorization: 'Bearer ${SHOP_TOKEN}' } },
        },
      },
      { FILES_KEY: 'fk-secret-1', SHOP_PATH: 'p/a b', SHOP_TOKEN: 'st-secret-2' },
    );
    const env = { FILES_KEY: 'fk-secret-1', SHOP_PATH: 'p/a b', SHOP_TOKEN: 'st-secret-2' };
    const files = connectParams(stdio!, env);
    expect(files.params).toMatchObject({ transport: 'stdio', env: { API_KEY: 'fk-secret-1', PLAIN: 'x' } });
    const shop = connectParams(http!, env);
    expect(shop.params).toMatchObject({ transport: 'http', headers: { Authorization: 'Bearer st-secret-2' } });
    expect(redact(`GET ${String((shop.params as { url: URL }).url)} with Bearer st-secret-2`, shop.secrets)).toBe(
      'GET https://mcp.example.test/[redacted] with Bearer [redacted]',
    );
  });
});

describe("when a call's input is checked against the tool's JSON Schema", () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, count: { type: 'integer', minimum: 1 } },
    required: ['email'],
    additionalProperties: false,
  };

  test('then an input that fits passes as given, and no input is an empty object', () => {
    expect(jsonSchemaInput(schema).parse({ email: 'mara@thescoop.com', count: 2 })).toEqual({ email: 'mara@thescoop.com', count: 2 });
    expect(jsonSchemaInput({ type: 'object' }).parse(undefined)).toEqual({});
  });

  test('then each error is an issue at the field it names, formats included', () => {
    const result = jsonSchemaInput(schema).safeParse({ email: 'not an address', count: 0, extra: 1 });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['email', 'count']));
    expect(
      jsonSchemaInput(schema)
        .safeParse({})
        .error!.issues.map((i) => i.path),
    ).toEqual([['email']]);
  });

  test('then a schema Ajv cannot compile is named as such', () => {
    expect(schemaProblem({ type: 'object', properties: { a: { type: 'nonsense' } } })).toEqual(expect.any(String));
    expect(schemaProblem(schema)).toBeNull();
  });
});
