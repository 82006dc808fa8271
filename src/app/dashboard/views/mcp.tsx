// MCP servers (SEMANTICS §14): each configured server, its connection and its tools' states, with
// Refresh; and one server's tools, a held one's pinned and pending definitions side by side, each
// part that changed marked, with Accept. What a server lists (descriptions, schemas, names) is its
// own text: shown as text, invisible characters named, never as markup. Nothing of a server's
// configuration is shown but its name and transport: its env, headers and url may hold secrets.
import { canonicalJson } from '../../../core/canonical-json';
import { tooDeepAt } from '../../../core/json-depth';
import { jsonText } from '../../../core/json-text';
import { sameJson } from '../../../core/same-json';
import type { McpServerView } from '../../../mcp/mcp-views';
import type { PinStatus, PinnedTool } from '../../../mcp/pin-listing';
import { DEFINITION_PARTS, manifestTextOf, type DefinitionPart, type PinnedDefinition } from '../../../mcp/tool-definition';
import { PostForm } from './form';
import { Layout, type PageContext } from './layout';
import { VisibleText } from './visible-text';
import { Table } from './table';

export type ServerRow = McpServerView & { counts: Record<PinStatus, number> };

const TRANSPORTS: Record<McpServerView['transport'], string> = {
  stdio: 'stdio (a process toolgate starts)',
  http: 'Streamable HTTP',
};

const STATE_WORDS: Record<PinStatus, string> = {
  active: 'offered where a toolkit grants it',
  held: 'its definition changed: not offered until an operator accepts the new one',
  stale: 'its server no longer lists it: skipped by every toolkit',
};

const PART_NAMES: Record<DefinitionPart, string> = {
  title: 'Title',
  description: 'Description',
  input_schema: 'Input schema',
  annotations: 'Annotations',
};

export function McpServersPage(props: { ctx: PageContext; servers: ServerRow[] }) {
  const { ctx } = props;
  return (
    <Layout
      ctx={ctx}
      section="mcp"
      title="MCP servers"
      lead="The MCP servers this deployment is configured with. Each tool a server lists is pinned the first time; a tool whose definition changes is held, and offered to no run, until you accept the new one on its server's page."
    >
      {props.servers.length === 0 ? (
        <p>No MCP server is configured. Name them in TOOLGATE_MCP_CONFIG (or a host's mcp option) and start toolgate again.</p>
      ) : (
        <div class="table-scroll" role="region" aria-label="MCP servers" tabIndex={0}>
          <Table
            caption="Every configured MCP server"
            class="stacked"
            columns={['Server', 'Transport', 'Status', 'Tools']}
            actions="Actions"
          >
            {props.servers.map((s) => (
              <tr key={s.name}>
                <th scope="row">
                  <a href={`${ctx.base}/mcp/servers/${encodeURIComponent(s.name)}`}>{s.name}</a>
                </th>
                <td data-label="Transport">{TRANSPORTS[s.transport]}</td>
                <td data-label="Status">
                  <span class={`badge ${s.status}`}>{s.status}</span>
                  {s.error ? (
                    <p class="hint">
                      Last error: <VisibleText text={s.error} />
                    </p>
                  ) : null}
                  {s.status === 'unreachable' ? <p class="hint">toolgate connects again by itself, waiting longer each time.</p> : null}
                </td>
                <td data-label="Tools">
                  <ul class="inline" aria-label={`Tools of ${s.name}`}>
                    <li>{`${s.counts.active} active`}</li>
                    <li class={s.counts.held > 0 ? 'held' : undefined}>{`${s.counts.held} held`}</li>
                    <li>{`${s.counts.stale} stale`}</li>
                  </ul>
                  {s.skipped.length > 0 ? (
                    <details>
                      <summary>{`${s.skipped.length} not taken from its latest listing`}</summary>
                      <ul>
                        {s.skipped.map((t, i) => (
                          <li key={i}>
                            <code>
                              <VisibleText text={t.name} />
                            </code>
                            : <VisibleText text={t.reason} />
                          </li>
                        ))}
                      </ul>
                    </details>
                  ) : null}
                </td>
                <td class="actions">
                  <a href={`${ctx.base}/mcp/servers/${encodeURIComponent(s.name)}`} aria-label={`Tools of ${s.name}`}>
                    Tools
                  </a>
                  <PostForm action={`${ctx.base}/mcp/servers/${encodeURIComponent(s.name)}/refresh`} csrfToken={ctx.csrfToken}>
                    <button type="submit" aria-label={`Refresh ${s.name}`}>
                      Refresh
                    </button>
                  </PostForm>
                </td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Layout>
  );
}

export function McpToolsPage(props: { ctx: PageContext; server: ServerRow; tools: readonly PinnedTool[] }) {
  const { ctx, server, tools } = props;
  const held = tools.filter((t) => t.status === 'held' && t.pending_definition !== null);
  return (
    <Layout
      ctx={ctx}
      section="mcp"
      title={`Tools of ${server.name}`}
      lead="Every tool this server ever listed, in the order it was pinned. A toolkit names a tool by its id."
    >
      <p>
        <a href={`${ctx.base}/mcp`}>All MCP servers</a>
        {` · ${TRANSPORTS[server.transport]} · `}
        <span class={`badge ${server.status}`}>{server.status}</span>
      </p>
      {tools.length === 0 ? (
        <p>No tool pinned yet: the server has not been listed. Refresh it from the MCP servers page.</p>
      ) : (
        <Table caption={`Tools of ${server.name}`} columns={['Tool id', 'State', 'As the manifest shows it (pinned)']}>
          {tools.map((t) => (
            <tr key={t.tool_id} class={t.status === 'held' ? 'pending' : undefined}>
              <th scope="row">
                <code>{t.tool_id}</code>
                {t.tool_name !== t.tool_id.slice(server.name.length + 2) ? (
                  <p class="hint">
                    its name on the server: <code>{t.tool_name}</code>
                  </p>
                ) : null}
              </th>
              <td>
                <span class={`badge ${t.status}`}>{t.status}</span>
                <p class="hint">{STATE_WORDS[t.status]}</p>
              </td>
              <td>
                <ManifestText tool={t} server={server.name} />
                {t.status === 'held' ? <a href={`#held-${t.tool_id}`}>{`What changed in ${t.tool_id}`}</a> : null}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {held.map((t) => (
        <HeldTool key={t.tool_id} ctx={ctx} tool={t} pending={t.pending_definition!} />
      ))}
    </Layout>
  );
}

function HeldTool({ ctx, tool, pending }: { ctx: PageContext; tool: PinnedTool; pending: PinnedDefinition }) {
  // Compared here without sorting keys (as definitionChanges does), so a part nested deep costs its size.
  const changed = DEFINITION_PARTS.filter((part) => !sameJson(tool.definition[part], pending[part]));
  return (
    <section aria-labelledby={`held-${tool.tool_id}`}>
      <h2 id={`held-${tool.tool_id}`}>{`${tool.tool_id}: held`}</h2>
      <p>
        {`The server lists another definition than the one pinned. Changed: ${changed.length === 0 ? 'no part this page tells apart, only the digest' : changed.map((p) => PART_NAMES[p].toLowerCase()).join(', ')}. `}
        Read the new one before you accept it: the model reads it too, and a description can carry instructions. Accepting pins it, and the
        tool is offered again wherever a toolkit grants it.
      </p>
      <div class="table-scroll" role="region" aria-label={`Definitions of ${tool.tool_id}`} tabIndex={0}>
        <Table
          caption={`The pinned and the pending definition of ${tool.tool_id}`}
          class="side-by-side"
          columns={[
            'Part',
            <>
              Pinned <code>{`${tool.digest.slice(0, 12)}…`}</code>
            </>,
            <>
              Listed now, pending <code>{`${(tool.pending_digest ?? '').slice(0, 12)}…`}</code>
            </>,
          ]}
        >
          {DEFINITION_PARTS.map((part) => (
            <tr key={part} class={changed.includes(part) ? 'changed' : undefined}>
              <th scope="row">
                {PART_NAMES[part]}
                {changed.includes(part) ? <span class="badge changed">changed</span> : <p class="hint">unchanged</p>}
              </th>
              <td>
                <DefinitionPartText value={tool.definition[part]} />
              </td>
              <td>
                <DefinitionPartText value={pending[part]} />
              </td>
            </tr>
          ))}
        </Table>
      </div>
      <PostForm action={`${ctx.base}/mcp/tools/${encodeURIComponent(tool.tool_id)}/accept`} csrfToken={ctx.csrfToken}>
        <button type="submit" aria-label={`Accept the new definition of ${tool.tool_id}`}>
          Accept
        </button>
      </PostForm>
    </section>
  );
}

function ManifestText({ tool, server }: { tool: PinnedTool; server: string }) {
  const { display_name, summary } = manifestTextOf(tool.tool_name, server, tool.definition);
  return (
    <p>
      <strong>
        <VisibleText text={display_name} />
      </strong>
      <br />
      <span class="hint">
        <VisibleText text={summary} />
      </span>
    </p>
  );
}

/** Past this depth a part is shown on one line: laying it out would recurse as deep as a server nested it. */
const LAID_OUT_DEPTH = 32;

function DefinitionPartText({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">none</span>;
  return (
    <pre class="definition">
      <VisibleText text={typeof value === 'string' ? value : laidOut(value)} />
    </pre>
  );
}

/**
 * JSON with its keys sorted, as the digest reads it: both sides in one order, so only what differs
 * looks different. Deeper than LAID_OUT_DEPTH it is one line as the server gave it, since sorting
 * costs its size times its depth.
 */
function laidOut(value: unknown): string {
  return tooDeepAt(value, LAID_OUT_DEPTH) === null ? JSON.stringify(JSON.parse(canonicalJson(value)), null, 2) : jsonText(value);
}
