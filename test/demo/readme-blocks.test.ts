// The README's shell blocks, pasted in order into one terminal as a new user would, against the
// service started as the quick start starts it (`npm start`: no DATABASE_URL, so the embedded
// cluster, the demo and the admin token under .toolgate in the working directory). Where the README
// says a block needs a fresh demo first, the service is stopped and started again on a removed
// .toolgate, as the README says to. Each command's answer is held to what the README says of it:
// the JSON it shows, or what its comments name (403, pending_approval, Idempotent-Replayed: true,
// cap_exceeded, ...).
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readmeBlocks, type ShellBlock } from '../support/readme-blocks';
import { shellEnv, startService, type RunningService } from '../support/service-process';
import { shellSession, type ShellSession } from '../support/shell-session';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..');
const FRESH_DEMO = '`rm -rf .toolgate && npm start`';
/** What the README's MCP block sets FREEZER_TOKEN to; it must show up in no answer. */
const FREEZER_TOKEN = '...';
/** A command that starts the service with variables of its own, as the MCP block does. */
const START_WITH = /^((?:[A-Z_]+=\S+ )+)npm start$/;

const { sh, json } = readmeBlocks();
const [quickStart, ...rest] = sh;
const serviceBlocks = rest.filter((b) => b.source.includes('localhost:3000'));
const jsonAfter = (sentence: string): unknown => {
  const block = json.find((j) => j.before.includes(sentence));
  if (!block) throw new Error(`the README shows no JSON after "${sentence}"`);
  return block.value;
};

/** The README's JSON as a matcher: "…" stands for anything, and a thread id or Message-ID for any of its form. */
function asShown(value: unknown): unknown {
  if (value === '…') return expect.anything();
  if (typeof value === 'string' && /^thr_[0-9a-f]{32}$/.test(value)) return expect.stringMatching(/^thr_[0-9a-f]{32}$/);
  if (typeof value === 'string' && /^<tg\.[0-9a-f]{32}@toolgate\.invalid>$/.test(value))
    return expect.stringMatching(/^<tg\.[0-9a-f]{32}@toolgate\.invalid>$/);
  if (Array.isArray(value)) return value.map(asShown);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asShown(v)]));
  return value;
}

type Answer = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the answers' JSON, read by the checks
const body = (out: string): Answer => JSON.parse(out) as Answer;

/** What `curl -si` printed: the status, the headers (lower-cased names) and the JSON body. */
function withHeaders(out: string): { status: number; headers: Record<string, string>; body: Answer; text: string } {
  const at = out.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = out.slice(0, at).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const text = out.slice(at + 4);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(text) as Answer, text };
}

/** What the earlier answers said that a later check compares with. */
const seen: { maraAnswer?: string; janeThread?: string; refund1043?: string } = {};

type Check = (out: string) => void;
const nothing: Check = (out) => expect(out).toBe('');

// By the section each block is in, in the README's order, with one check a command: the count must
// match, so a command added to the README is a command added here.
const CHECKS: Record<string, Check[]> = {
  'Replay the scenario': [
    nothing,
    (out) => {
      const a = body(out);
      expect(a).toMatchObject({ run_id: 1, routing_key: 'jane@acme.com', tools_offered: ['check_flavor_stock', 'lookup_order'] });
      expect(a.steps).toContainEqual(expect.objectContaining({ tool: 'lookup_order', status: 'success' }));
      expect(a.reply.cc).toEqual(['mara@thescoop.com']);
      seen.janeThread = a.thread_id;
    },
    (out) => {
      const a = body(out);
      expect(a).toMatchObject({ thread_id: seen.janeThread, routing_key: 'mara@thescoop.com' });
      expect(a.tools_offered).toContain('process_refund');
      expect(a.steps).toEqual([expect.objectContaining({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'success' })]);
      seen.maraAnswer = out;
    },
    (out) => {
      expect(body(out)).toEqual(asShown(jsonAfter('What step 3 answers')));
      expect(body(out).thread_id).toBe(seen.janeThread);
    },
    (out) => {
      const a = body(out);
      expect(a.new_thread).toMatchObject({ reason: 'not_a_participant', requested: '<jane-1@acme.com>' });
      expect(a.thread_id).not.toBe(seen.janeThread);
      expect(a.steps).toEqual([]);
    },
    (out) => {
      const threads = body(out) as Answer[];
      expect(threads.map((t) => [t.id === seen.janeThread, [...t.participants].sort()])).toEqual(
        expect.arrayContaining([
          [true, ['jane@acme.com', 'mara@thescoop.com']],
          [false, ['ops@courier-updates.example']],
        ]),
      );
    },
    (out) => {
      const records = body(out) as Answer[];
      expect(records).toContainEqual(
        expect.objectContaining({ tool_id: 'process_refund', status: 'denied', routing_key: 'jane@acme.com' }),
      );
      expect(records).toContainEqual(
        expect.objectContaining({ tool_id: 'process_refund', status: 'success', routing_key: 'mara@thescoop.com' }),
      );
    },
    (out) => expect(body(out)).toMatchObject({ code: 'sender_forbidden' }),
    (out) => {
      const a = body(out);
      expect(a).toMatchObject({ run: 'scheduled', routing_key: null, tools_offered: ['check_flavor_stock', 'send_email'] });
      expect(a.steps.map((s: Answer) => [s.tool, s.status])).toEqual([
        ['check_flavor_stock', 'success'],
        ['send_email', 'success'],
      ]);
    },
  ],
  'Preview a change before making it': [
    (out) => {
      const a = body(out);
      expect(a.senders).toEqual({
        gaining: [],
        losing: [{ routing_key: 'mara@thescoop.com', agent_id: 1, tools: ['process_refund'], runs: 1 }],
      });
      expect(a.calls.changed).toEqual([
        expect.objectContaining({ tool_id: 'process_refund', routing_key: 'mara@thescoop.com', was: 'success', would_be: 'denied' }),
      ]);
    },
  ],
  'Delivered twice, retried, capped': [
    (out) => {
      const replay = withHeaders(out);
      expect({ status: replay.status, replayed: replay.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: 'true' });
      expect(`${replay.text}`).toBe(seen.maraAnswer);
    },
    (out) => expect(body(out).caps).toEqual([{ tool_id: 'process_refund', per: 'sender', limit: 2, window: '1d' }]),
    (out) => {
      const first = withHeaders(out);
      expect({ status: first.status, replayed: first.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
      expect(first.body).toEqual({
        tool: 'process_refund',
        status: 'success',
        output: expect.objectContaining({ order_id: 'SCP-1043', refunded: true }),
      });
      seen.refund1043 = first.text;
    },
    (out) => {
      const again = withHeaders(out);
      expect({ status: again.status, replayed: again.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: 'true' });
      expect(again.text).toBe(seen.refund1043);
    },
    (out) =>
      expect(body(out)).toMatchObject({ tool: 'process_refund', status: 'success', output: { order_id: 'SCP-1050', refunded: true } }),
    (out) => expect(body(out)).toEqual(asShown(jsonAfter('What the third refund answers'))),
    (out) => {
      const a = body(out);
      expect(a.capped).toEqual(['process_refund']);
      const finance = (a.attachments as Answer[]).find((x) => x.toolkit_name === 'Finance')!;
      expect(finance.caps).toEqual([expect.objectContaining({ tool_id: 'process_refund', limit: 2, remaining: 0 })]);
    },
  ],
  'The same gate, without a model': [
    (out) => expect(body(out)).toMatchObject({ routing_key: 'jane@acme.com', tools: ['check_flavor_stock', 'lookup_order'] }),
    (out) => expect(body(out)).toMatchObject({ code: 'tool_forbidden', tool: 'process_refund' }),
    (out) => expect(body(out)).toMatchObject({ detail: 'This agent does not have email_analyzer tool enabled', code: 'tool_forbidden' }),
    (out) => expect(body(out)).toMatchObject({ toolkit: { id: 2, name: 'Default Tools' } }),
    (out) => expect(body(out)).toMatchObject({ routing_key: 'jane@acme.com', analysis: { category: 'billing' } }),
  ],
  'The same thread, with approval': [
    nothing,
    (out) => expect(body(out)).toMatchObject({ id: 2, rules: [], approval: { approvers: ['*@thescoop.com'] } }),
    (out) => {
      const a = body(out);
      expect(a.needs_approval).toEqual(['process_refund']);
      expect(a.steps).toContainEqual(
        expect.objectContaining({
          tool: 'process_refund',
          input: { order_id: 'SCP-1042' },
          status: 'pending_approval',
          approval_request_id: 1,
        }),
      );
      expect(a.reply.cc).toEqual(['mara@thescoop.com']);
      seen.janeThread = a.thread_id;
    },
    (out) => {
      const pending = body(out) as Answer[];
      expect(pending).toEqual([
        expect.objectContaining({ id: 1, tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'pending' }),
      ]);
      // The reply before told Mara how to decide it: by this code.
      expect(pending[0]!.code).toMatch(/^[0-9A-Z]{8}$/);
    },
    (out) => {
      const a = body(out);
      expect(a.decided).toEqual([
        expect.objectContaining({
          request_id: 1,
          status: 'approved',
          requested_by: 'jane@acme.com',
          result: expect.objectContaining({ status: 'success' }),
        }),
      ]);
      expect(a.reply.cc).toContain('jane@acme.com');
    },
    (out) => expect(body(out).steps).toContainEqual(expect.objectContaining({ status: 'pending_approval', approval_request_id: 2 })),
    (out) => expect(body(out).steps).toContainEqual(expect.objectContaining({ status: 'pending_approval', approval_request_id: 3 })),
    (out) => {
      const a = body(out);
      expect(a.decided ?? []).toEqual([]);
      expect((a.undecided as Answer[]).map((u) => [u.request_id, typeof u.code])).toEqual([
        [2, 'string'],
        [3, 'string'],
      ]);
    },
    nothing,
    (out) => {
      const a = body(out);
      expect(a.decided).toEqual([expect.objectContaining({ request_id: 3, status: 'denied', input: { order_id: 'SCP-1050' } })]);
      expect(a.undecided).toEqual([expect.objectContaining({ request_id: 2 })]);
    },
    (out) => expect(body(out)).toMatchObject({ code: 'conflict' }),
  ],
  'Trying a change on live traffic first': [
    (out) => expect(body(out)).toMatchObject({ id: 1, rules: [], candidate: { rules: [{ kind: 'deny', pattern: '*@acme.com' }] } }),
    (out) => {
      const a = body(out);
      expect(a.routing_key).toBe('jane@acme.com');
      expect(a.tools_offered).toEqual(expect.arrayContaining(['check_flavor_stock', 'lookup_order']));
      expect(a.steps).toContainEqual(expect.objectContaining({ tool: 'lookup_order', status: 'success' }));
    },
    (out) => {
      const a = body(out);
      expect(a.shadow).toMatchObject({
        runs: 1,
        differing_runs: 1,
        gaining: [],
        losing: [{ routing_key: 'jane@acme.com', run: 'sender', tools: ['check_flavor_stock', 'lookup_order'], runs: 1 }],
      });
      expect(a.shadow.calls).toContainEqual(
        expect.objectContaining({ tool_id: 'lookup_order', status: 'success', would_be: 'denied', reason: 'deny_rule' }),
      );
    },
    (out) => {
      const a = body(out);
      expect(a.rules).toEqual([expect.objectContaining({ kind: 'deny', pattern: '*@acme.com' })]);
      expect(a.candidate).toBeUndefined();
    },
    (out) => expect(body(out)).toMatchObject({ code: 'tool_forbidden', tool: 'lookup_order' }),
  ],
  "MCP servers' tools": [
    nothing,
    nothing,
    (out) => {
      const servers = body(out) as Answer[];
      expect(servers.map((s) => [s.name, s.transport, s.status])).toEqual([
        ['files', 'stdio', 'connected'],
        ['freezer', 'http', 'unreachable'],
      ]);
      expect(servers[0]!.tools).toBeGreaterThan(0);
      expect(out).not.toContain(FREEZER_TOKEN);
    },
    (out) => expect(body(out)).toMatchObject({ id: 6, member_tool_ids: ['files__read_text_file', 'files__list_directory'] }),
    (out) =>
      expect(body(out)).toMatchObject({
        toolkit: { id: 6 },
        rules: [expect.objectContaining({ kind: 'allow', pattern: '*@thescoop.com' })],
      }),
  ],
  'An MCP client on a session': [
    (out) => {
      const a = body(out);
      expect(a).toMatchObject({
        routing_key: 'mara@thescoop.com',
        needs_approval: [],
        url: expect.stringMatching(/^http:\/\/localhost:\d+\/mcp$/),
      });
      expect(a.tools_offered).toEqual([
        'check_flavor_stock',
        'files__list_directory',
        'files__read_text_file',
        'lookup_order',
        'process_refund',
      ]);
      expect(a.token).toMatch(/^tgmcp_/);
    },
  ],
};
const NAMES = Object.keys(CHECKS);

let dir: string;
let service: RunningService | undefined;
let shell: ShellSession | undefined;

/** `npm start` in the reader's directory: the service's own process, with a shell's environment. */
async function npmStart(): Promise<RunningService> {
  service = await startService({ env: shellEnv(), cwd: dir });
  return service;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-readme-'));
  await fs.chmod(dir, 0o755); // the embedded server runs as `postgres` when we are root
  // The reader is in their clone: its package.json and node_modules, where npx finds the MCP servers.
  await fs.copyFile(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  // The MCP configuration the README shows, saved as it says.
  await fs.writeFile(path.join(dir, 'mcp.json'), JSON.stringify(jsonAfter('Saved as `mcp.json`'), null, 2));
  shell = shellSession(dir, shellEnv());
});

afterAll(async () => {
  shell?.close();
  service?.kill();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe("when a new user follows the README's quick start", () => {
  test('then it is npm start and npm test, and npm start is the service the test starts', () => {
    expect(quickStart!.commands.map((c) => c.text)).toEqual(['npm install && npm start', 'npm test']);
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('tsx src/app/server.ts');
  });

  test('then every shell block after it is one the service answers, or the plugin install that test/package runs', () => {
    const others = rest.filter((b) => !serviceBlocks.includes(b)).map((b) => b.commands.map((c) => c.text));
    expect(others).toEqual([
      ['npm install && npm pack', expect.stringMatching(/^npm install \/path\/to\/toolgate\/toolgate-[\d.]+\.tgz express /)],
    ]);
    expect(serviceBlocks.map((b) => [b.heading, b.commands.length])).toEqual(NAMES.map((name) => [name, CHECKS[name]!.length]));
  });
});

describe("when the README's blocks are pasted in order into one terminal", () => {
  beforeAll(async () => {
    await npmStart();
  });

  test.each(serviceBlocks.map((b) => [b.heading, b] as const))(
    'then the block of "%s" answers what the README says',
    async (name, block: ShellBlock) => {
      // "On a fresh demo": stopped, its .toolgate removed, and started again, as the README says.
      if (block.before.includes(FRESH_DEMO)) {
        const stopped = await service!.stop();
        expect(stopped.code).toBe(0);
        await fs.rm(path.join(dir, '.toolgate'), { recursive: true, force: true });
        await npmStart();
      }
      const checks = CHECKS[name];
      if (!checks) throw new Error(`no checks for the README's block under "${name}": add them to CHECKS`);
      for (const [n, command] of block.commands.entries()) {
        const started = START_WITH.exec(command.text);
        if (started) {
          // Another start, with its variables: the service stopped (as the README says) and started with them.
          expect((await service!.stop()).code).toBe(0);
          const vars = Object.fromEntries(
            started[1]!
              .trim()
              .split(' ')
              .map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]),
          );
          service = await startService({ env: { ...shellEnv(), ...vars }, cwd: dir });
          checks[n]!('');
          continue;
        }
        const out = await shell!.run(command.text.replaceAll('localhost:3000', `localhost:${service!.port}`));
        try {
          checks[n]!(out);
        } catch (err) {
          (err as Error).message =
            `command ${n + 1} of "${name}" (${command.comment || command.text.slice(0, 80)}):\n${out}\n\n${(err as Error).message}`;
          throw err;
        }
      }
    },
  );
});
