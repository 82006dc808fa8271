// A run's shadow (SEMANTICS §15) on the dispatch path: the records say what a candidate would have
// decided, and nothing the candidate says, nor a failure working it out, changes what runs.
import { compilePolicy } from '../../src/core/policy-index';
import type { CallShadow } from '../../src/core/shadow';
import { ToolForbiddenError } from '../../src/errors';
import { ToolRun } from '../../src/run/tool-run';
import type { ToolCallRecord } from '../../src/services/tool-calls';
import { AGENT, attachment, fakes, LIVE, MARA, runOf } from '../support/fake-run';

const JANE = { kind: 'sender', routing_key: 'jane@acme.com' } as const;

/** Fakes that keep each record's shadow: a started record's and a complete one's. */
function recording() {
  const shadows: { tool_id: string; status: string; shadow: CallShadow | null | undefined }[] = [];
  const faults: string[] = [];
  const f = fakes({
    record: async (r: ToolCallRecord) => void shadows.push({ tool_id: r.tool_id, status: r.status, shadow: r.shadow }),
    start: async (r) => {
      shadows.push({ tool_id: r.tool_id, status: 'started', shadow: r.shadow });
      return 1;
    },
    onFault: (_err, context) => void faults.push(context.stage),
  });
  return { ...f, shadows, faults };
}

describe('when a candidate would deny the sender a tool the live terms grant', () => {
  const kit = attachment(1, ['lookup_order'], { candidate: { rules: [{ id: null, kind: 'deny', pattern: 'mara@thescoop.com' }] } });

  test('then the call runs, and its started record says it would be denied', async () => {
    const f = recording();
    const run = runOf({ attachments: [kit] }, f.deps);
    const outcome = await run.execute('lookup_order', () => 'found');
    expect(outcome).toEqual({ status: 'success', output: 'found' });
    expect(f.shadows).toEqual([
      { tool_id: 'lookup_order', status: 'started', shadow: { attachment_id: 1, would_be: 'denied', reason: 'deny_rule' } },
    ]);
    expect(run.shadow).toEqual({ attachment_id: 1, adds: [], removes: ['lookup_order'] });
  });
});

describe('when a candidate would admit a sender the live terms refuse', () => {
  test('then the call is still refused, and its denied record says it would be admitted', async () => {
    const f = recording();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'], { candidate: { rules: [] } })] }, f.deps, JANE);
    expect(run.tools).toEqual([]);
    await expect(run.execute('lookup_order', () => 'found')).rejects.toBeInstanceOf(ToolForbiddenError);
    expect(f.events.some((e) => e.kind === 'ran')).toBe(false);
    expect(f.shadows).toEqual([
      { tool_id: 'lookup_order', status: 'denied', shadow: { attachment_id: 1, would_be: 'admitted', reason: 'no_rules' } },
    ]);
  });
});

describe('when the live terms and the candidate both need approval for a tool a route runs at once', () => {
  test('then the refusal carries no shadow: the candidate would decide it alike', async () => {
    const f = recording();
    const approval = { approvers: ['boss@thescoop.com'] };
    const kit = attachment(1, ['lookup_order'], {
      ...approval,
      candidate: {
        rules: [
          { id: null, kind: 'allow', pattern: '*@thescoop.com' },
          { id: null, kind: 'deny', pattern: 'x@thescoop.com' },
        ],
      },
    });
    const run = runOf({ attachments: [kit] }, f.deps);
    await expect(run.execute('lookup_order', () => 'found')).rejects.toMatchObject({ code: 'approval_required' });
    expect(f.shadows).toEqual([{ tool_id: 'lookup_order', status: 'denied', shadow: undefined }]);
  });
});

describe('when working out the shadow fails', () => {
  test('then the call runs as the live terms decide, its record has no shadow, and the failure is told as a fault', async () => {
    const f = recording();
    const compiled = compilePolicy(
      { agent_id: AGENT.id, attachments: [attachment(1, ['lookup_order'], { candidate: { rules: [] } })] },
      LIVE,
    );
    const broken = {
      ...compiled,
      offer: compiled.offer.bind(compiled),
      resolve: compiled.resolve.bind(compiled),
      shadows: [
        {
          attachment_id: 1,
          policy: {
            offer: () => {
              throw new Error('shadow broke');
            },
          } as unknown as typeof compiled,
          caps_stamp: null,
        },
      ],
    } as typeof compiled;
    const run = new ToolRun(AGENT, MARA, broken, f.deps);
    expect(await run.execute('lookup_order', () => 'found')).toEqual({ status: 'success', output: 'found' });
    expect(f.shadows).toEqual([{ tool_id: 'lookup_order', status: 'started', shadow: undefined }]);
    expect(run.shadow).toBeNull();
    expect(f.faults).toEqual(['shadow', 'shadow']);
  });
});

describe('when no attachment carries a candidate', () => {
  test('then no record carries a shadow and the run has none', async () => {
    const f = recording();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, f.deps);
    await run.execute('lookup_order', () => 'found');
    expect(f.shadows).toEqual([{ tool_id: 'lookup_order', status: 'started', shadow: undefined }]);
    expect(run.shadow).toBeNull();
  });
});

describe('when a candidate caps a tool the live terms run uncapped', () => {
  const cap = { tool_id: 'lookup_order', per: 'sender', limit: 1, window_s: 86_400 } as const;
  const kit = attachment(1, ['lookup_order'], { candidate: { caps: [cap], stamp: '20261207101500123456' } });

  test("then the call is started uncapped and then counted against the candidate's own counter, marked when it is full", async () => {
    const f = recording();
    const counted: unknown[] = [];
    const claims: unknown[] = [];
    const run = runOf(
      { attachments: [kit] },
      {
        ...f.deps,
        start: async (r, caps) => {
          claims.push(caps);
          return f.deps.start(r, caps);
        },
        countShadowCaps: async (id, entries) => void counted.push({ id, entries }),
      },
    );
    expect(await run.execute('lookup_order', () => 'found')).toEqual({ status: 'success', output: 'found' });
    expect(claims).toEqual([null]);
    expect(f.shadows).toEqual([{ tool_id: 'lookup_order', status: 'started', shadow: undefined }]);
    expect(counted).toEqual([
      {
        id: 1,
        entries: [
          {
            entry: { attachment_id: 1, would_be: 'denied', reason: 'cap_exceeded' },
            caps: [{ key: 'shadow:1@20261207101500123456|lookup_order|sender|86400|sender:mara@thescoop.com', limit: 1, window_s: 86_400 }],
          },
        ],
      },
    ]);
  });

  test('then a failure counting it is told as a fault, and the call runs all the same', async () => {
    const f = recording();
    const run = runOf(
      { attachments: [kit] },
      {
        ...f.deps,
        countShadowCaps: async () => {
          throw new Error('shadow count broke');
        },
      },
    );
    expect(await run.execute('lookup_order', () => 'found')).toEqual({ status: 'success', output: 'found' });
    expect(f.faults).toEqual(['shadow']);
  });

  test('then a candidate that would refuse the sender by its gate counts nothing', async () => {
    const f = recording();
    const counted: unknown[] = [];
    const refusing = attachment(1, ['lookup_order'], {
      candidate: { caps: [cap], rules: [{ id: null, kind: 'deny', pattern: 'mara@thescoop.com' }], stamp: '1' },
    });
    const run = runOf({ attachments: [refusing] }, { ...f.deps, countShadowCaps: async (_id, entries) => void counted.push(entries) });
    await run.execute('lookup_order', () => 'found');
    expect(counted).toEqual([]);
    expect(f.shadows[0]?.shadow).toEqual({ attachment_id: 1, would_be: 'denied', reason: 'deny_rule' });
  });
});
