// What connecting to one server takes, with its `${VAR}` references read from the environment: made
// at each connect and handed to the SDK's transport, never kept beyond it. The values read are also
// handed back as `secrets`, so that any text toolgate shows of the server (a transport's error)
// has them cut out first.
import { expandReferences, type McpServerConfig } from './mcp-config';

export type ConnectParams =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { transport: 'http'; url: URL; headers: Record<string, string> };

/** Shorter values are not taken for secrets: cutting every "1" would garble the errors it guards. */
const MIN_SECRET_LENGTH = 4;

export function connectParams(server: McpServerConfig, env: NodeJS.ProcessEnv): { params: ConnectParams; secrets: string[] } {
  const secrets = new Set<string>();
  const read = (name: string): string => {
    // Checked to be set when toolgate was built; unset since, it reads as empty, never as the reference.
    const value = env[name] ?? '';
    // As written, and as a URL carries it: an error may quote either.
    if (value.length >= MIN_SECRET_LENGTH) for (const form of [value, encodeURI(value), encodeURIComponent(value)]) secrets.add(form);
    return value;
  };
  const expanded = (text: string) => expandReferences(text, read);
  const values = (record: Record<string, string>) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, expanded(v)]));
  const params: ConnectParams =
    server.transport === 'stdio'
      ? {
          transport: 'stdio',
          command: server.command,
          args: [...server.args],
          env: values(server.env),
          ...(server.cwd ? { cwd: server.cwd } : {}),
        }
      : { transport: 'http', url: new URL(expanded(server.url)), headers: values(server.headers) };
  return { params, secrets: [...secrets] };
}

/** The text with every secret cut out, longest first, so that no part of one survives another's cut. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join('[redacted]');
  return out;
}
