// The per-instance cache: bounded, one load in flight per agent, and never storing what a load read
// before an invalidation, a clear or a change of trust.
import { compilePolicy } from '../../src/core/policy-index';
import { PolicyCache, type CachedPolicy } from '../../src/run/policy-cache';

const entry = (id: number, version = 1): CachedPolicy => ({
  agent: { id, name: `A${id}`, system_prompt: null, escalation_address: null },
  compiled: compilePolicy({ agent_id: id, attachments: [] }, new Set()),
  version,
});

/** A load the test finishes by hand. */
function deferred(): { load: () => Promise<CachedPolicy | null>; finish(value: CachedPolicy | null): void; calls: number } {
  let resolve: (value: CachedPolicy | null) => void = () => undefined;
  const d = {
    calls: 0,
    load: () => {
      d.calls += 1;
      return new Promise<CachedPolicy | null>((r) => (resolve = r));
    },
    finish: (value: CachedPolicy | null) => resolve(value),
  };
  return d;
}

describe('the policy cache', () => {
  test('when it is not enabled, then every lookup reads through and nothing is kept', async () => {
    const cache = new PolicyCache({ maxAgents: 10, maxAgeMs: 0 });
    const first = await cache.get(1, async () => entry(1));
    expect(first.outcome).toBe('bypass');
    expect(cache.size).toBe(0);
  });

  test('when many runs ask for one agent at once, then one load serves them all and is kept', async () => {
    const cache = new PolicyCache({ maxAgents: 10, maxAgeMs: 0 });
    cache.enable();
    const d = deferred();
    const asks = [cache.get(1, d.load), cache.get(1, d.load), cache.get(1, d.load)];
    d.finish(entry(1));
    expect((await Promise.all(asks)).map((a) => a.outcome)).toEqual(['miss', 'miss', 'miss']);
    expect(d.calls).toBe(1);
    expect((await cache.get(1, d.load)).outcome).toBe('hit');
  });

  test.each([
    ['the agent is invalidated', (c: PolicyCache) => c.invalidate([1])],
    ['the cache is cleared', (c: PolicyCache) => c.clear()],
    [
      'the cache is disabled and enabled again',
      (c: PolicyCache) => {
        c.disable();
        c.enable();
      },
    ],
  ])(
    'when %s while a load is under way, then that load is handed out but never stored, and later runs load anew',
    async (_what, change) => {
      const cache = new PolicyCache({ maxAgents: 10, maxAgeMs: 0 });
      cache.enable();
      const old = deferred();
      const before = cache.get(1, old.load);
      change(cache);
      const fresh = deferred();
      const after = cache.get(1, fresh.load);
      old.finish(entry(1, 1));
      fresh.finish(entry(1, 2));
      expect((await before).policy?.version).toBe(1);
      expect((await after).policy?.version).toBe(2);
      expect(cache.peek(1)?.version).toBe(2);
    },
  );

  test('when an agent does not exist, then nothing is cached for it', async () => {
    const cache = new PolicyCache({ maxAgents: 10, maxAgeMs: 0 });
    cache.enable();
    await cache.get(7, async () => null);
    expect(cache.size).toBe(0);
  });

  test('when more agents are asked for than it holds, then the least recently used go first', async () => {
    const cache = new PolicyCache({ maxAgents: 2, maxAgeMs: 0 });
    cache.enable();
    for (const id of [1, 2, 1, 3]) await cache.get(id, async () => entry(id));
    expect(cache.size).toBe(2);
    expect(cache.peek(1)).toBeDefined();
    expect(cache.peek(2)).toBeUndefined();
  });
});
