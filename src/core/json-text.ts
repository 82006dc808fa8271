// A JSON value as one line of text, as JSON.stringify writes it (keys in their order), written
// without recursion into one list of pieces: a value nested thousands deep (what an MCP server may
// list as a schema) is written in time linear in its size, and never exhausts the stack.

type Step = { value: unknown } | { text: string };

export function jsonText(value: unknown): string {
  const out: string[] = [];
  const steps: Step[] = [{ value }];
  for (let step = steps.pop(); step !== undefined; step = steps.pop()) {
    if ('text' in step) {
      out.push(step.text);
      continue;
    }
    const v = step.value;
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v ?? null));
      continue;
    }
    // Pushed in reverse, so they come off the stack in order.
    const pieces: Step[] = [];
    if (Array.isArray(v)) {
      pieces.push({ text: '[' });
      v.forEach((item, i) => pieces.push(...(i > 0 ? [{ text: ',' }] : []), { value: item }));
      pieces.push({ text: ']' });
    } else {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, item]) => item !== undefined);
      pieces.push({ text: '{' });
      entries.forEach(([key, item], i) => pieces.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: item }));
      pieces.push({ text: '}' });
    }
    for (let i = pieces.length - 1; i >= 0; i--) steps.push(pieces[i]!);
  }
  return out.join('');
}
