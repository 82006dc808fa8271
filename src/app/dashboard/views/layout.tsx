// The frame of every signed-in page: a skip link, the sections, sign out, one message from the
// last action, and the page's heading.
import type { ComponentChildren } from 'preact';

export type Section = 'agents' | 'toolkits' | 'approvals' | 'who-gets-what' | 'tool-calls' | 'mcp' | 'migration';

export interface PageContext {
  /** Where the dashboard is mounted (`/admin`). */
  base: string;
  csrfToken: string;
  flash?: string;
}

const SECTIONS: { id: Section; label: string; path: string }[] = [
  { id: 'agents', label: 'Agents', path: '/agents' },
  { id: 'toolkits', label: 'Toolkits', path: '/toolkits' },
  { id: 'approvals', label: 'Approvals', path: '/approvals' },
  { id: 'who-gets-what', label: 'Who gets what', path: '/who-gets-what' },
  { id: 'tool-calls', label: 'Tool calls', path: '/tool-calls' },
  { id: 'mcp', label: 'MCP servers', path: '/mcp' },
  { id: 'migration', label: 'Migrate enabled_tools', path: '/migration' },
];

export function Document({
  base,
  title,
  children,
  refreshSeconds,
}: {
  base: string;
  title: string;
  children: ComponentChildren;
  refreshSeconds?: number;
}) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* A page that follows a running job reloads itself: progress with no script. */}
        {refreshSeconds ? <meta httpEquiv="refresh" content={String(refreshSeconds)} /> : null}
        <title>{`${title} · toolgate`}</title>
        <link rel="stylesheet" href={`${base}/assets/dashboard.css`} />
        <link rel="icon" href={`${base}/assets/favicon.svg`} type="image/svg+xml" />
      </head>
      <body>{children}</body>
    </html>
  );
}

export function Layout(props: {
  ctx: PageContext;
  section: Section | null;
  title: string;
  lead?: ComponentChildren;
  children: ComponentChildren;
  refreshSeconds?: number;
}) {
  const { ctx, section, title } = props;
  return (
    <Document base={ctx.base} title={title} refreshSeconds={props.refreshSeconds}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={`${ctx.base}/agents`}>
          toolgate
        </a>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.id}>
                <a href={`${ctx.base}${s.path}`} aria-current={s.id === section ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <form method="post" action={`${ctx.base}/sign-out`} class="sign-out">
          <Csrf ctx={ctx} />
          <button type="submit" class="link">
            Sign out
          </button>
        </form>
      </header>
      <main id="main" tabIndex={-1}>
        {ctx.flash ? (
          <p role="status" class="flash">
            {ctx.flash}
          </p>
        ) : null}
        <h1>{title}</h1>
        {props.lead ? <p class="lead">{props.lead}</p> : null}
        {props.children}
      </main>
    </Document>
  );
}

/** The form's proof that it comes from a dashboard page (checked on every POST). */
export function Csrf({ ctx }: { ctx: PageContext }) {
  return <input type="hidden" name="_csrf" value={ctx.csrfToken} />;
}
