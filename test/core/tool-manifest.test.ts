// The manifest: the four ported tools, host tools beside them, and misregistrations refused at
// construction with a code and a sentence that names the fix.
import { BUILTIN_TOOLS, createManifest } from '../../src/core/tool-manifest';
import { ToolgateConfigError } from '../../src/errors';
import { ToolRegistry, type HostTool } from '../../src/tools/tool-registry';
import { z } from 'zod';

const host = { id: 'lookup_order', display_name: 'Look up order', summary: 'Finds an order.', kind: 'gate' as const, builtin: false };

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolgateConfigError) return err.code;
    throw err;
  }
  throw new Error('nothing was thrown');
};

describe('when the manifest is built', () => {
  test('then it holds the four ported tools with their enforcement kinds', () => {
    expect(BUILTIN_TOOLS.map((t) => [t.id, t.kind, t.builtin])).toEqual([
      ['email_analyzer', 'gate', true],
      ['document_search', 'gate', true],
      ['task_creator', 'enhancement', true],
      ['reply_generator', 'enhancement', true],
    ]);
  });

  test('then host tools follow the builtins and only builtins seed Default Tools', () => {
    const manifest = createManifest([host]);
    expect(manifest.list().map((t) => t.id)).toEqual([
      'email_analyzer',
      'document_search',
      'task_creator',
      'reply_generator',
      'lookup_order',
    ]);
    expect(manifest.builtinIds()).toEqual(['email_analyzer', 'document_search', 'task_creator', 'reply_generator']);
    expect(manifest.has('lookup_order')).toBe(true);
    expect(manifest.ids.has('nope')).toBe(false);
  });

  test('then a duplicate id is refused with ERR_TOOLGATE_DUPLICATE_TOOL', () => {
    expect(codeOf(() => createManifest([host, host]))).toBe('ERR_TOOLGATE_DUPLICATE_TOOL');
    expect(codeOf(() => createManifest([{ ...host, id: 'email_analyzer' }]))).toBe('ERR_TOOLGATE_DUPLICATE_TOOL');
  });

  test('then an id that is not snake_case is refused with ERR_TOOLGATE_TOOL_DEFINITION', () => {
    expect(codeOf(() => createManifest([{ ...host, id: 'Lookup-Order' }]))).toBe('ERR_TOOLGATE_TOOL_DEFINITION');
  });

  test('then a host tool cannot claim to be builtin', () => {
    expect(codeOf(() => createManifest([{ ...host, builtin: true }]))).toBe('ERR_TOOLGATE_HOST_TOOL_BUILTIN');
  });
});

describe('when a host registers tools with the registry', () => {
  test('then a tool without an execute function is refused at construction', () => {
    const broken = { id: 'x_tool', display_name: 'X', summary: 'x', input: z.object({}) } as unknown as HostTool;
    expect(codeOf(() => new ToolRegistry([broken]))).toBe('ERR_TOOLGATE_TOOL_EXECUTE');
  });

  test('then records of the reply stage carry the legacy pipeline name', () => {
    const registry = new ToolRegistry([]);
    expect(registry.legacyName('reply_generator')).toBe('multi_agent_reply_agent');
    expect(registry.legacyName('document_search')).toBe('document_search');
  });
});
