// requireTool(id): a gate tool the run is not offered refuses the request, with its denied record;
// an enhancement never refuses; an id no tool has fails at construction.
import { requireTool } from '../../middleware/require-tool';
import { createManifest } from '../../src/core/tool-manifest';
import type { DispatchDecision } from '../../src/run/tool-run';
import { attachment, fakes, runOf } from '../support/fake-run';
import { throughMiddleware } from '../support/middleware-harness';

const manifest = createManifest();

function withRun(members: string[]) {
  const { deps, events } = fakes();
  return { events, state: { run: runOf({ attachments: [attachment(1, members)] }, deps) } };
}

test('when a route names a tool nobody registered, then construction fails with ERR_TOOLGATE_UNKNOWN_TOOL and a did-you-mean', () => {
  expect(() => requireTool(manifest, 'email_analyser')).toThrow(
    expect.objectContaining({ code: 'ERR_TOOLGATE_UNKNOWN_TOOL', message: expect.stringContaining('did you mean "email_analyzer"?') }),
  );
});

test('when the run is offered the gate tool, then the request passes and the grant is told', async () => {
  const told: DispatchDecision[] = [];
  const { state, events } = withRun(['email_analyzer']);
  const out = await throughMiddleware(
    requireTool(manifest, 'email_analyzer', (d) => told.push(d)),
    { state },
  );
  expect(out.passed).toBe(true);
  expect(told).toEqual([{ outcome: 'granted', reason: 'offered' }]);
  expect(events).toEqual([]);
});

test('when the run is not offered the gate tool, then it is a 403 tool_forbidden with one denied record', async () => {
  const { state, events } = withRun(['lookup_order']);
  const out = await throughMiddleware(requireTool(manifest, 'email_analyzer'), { state });
  expect(out).toMatchObject({ status: 403, passed: false, body: { code: 'tool_forbidden', tool: 'email_analyzer' } });
  expect(events.map((e) => e.detail)).toEqual([{ tool_id: 'email_analyzer', status: 'denied' }]);
});

test('when a legacy route refuses, then the detail is the legacy sentence its clients match on', async () => {
  const { state } = withRun(['lookup_order']);
  const out = await throughMiddleware(requireTool(manifest, 'email_analyzer', undefined, { legacySentence: true }), { state });
  expect(out.body.detail).toBe('This agent does not have email_analyzer tool enabled');
});

test('when the tool is an enhancement the run is not offered, then the request passes: the route degrades', async () => {
  const { state, events } = withRun(['lookup_order']);
  expect((await throughMiddleware(requireTool(manifest, 'task_creator'), { state })).passed).toBe(true);
  expect(events).toEqual([]);
});

test('when no run was resolved before it, then it is a 500 misconfigured, never a grant', async () => {
  const out = await throughMiddleware(requireTool(manifest, 'email_analyzer'));
  expect(out).toMatchObject({ status: 500, passed: false, body: { code: 'misconfigured' } });
});
