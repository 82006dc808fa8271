// The text a span carries when a deployment opts in to content (SEMANTICS §16): messages in the GenAI
// conventions' JSON form and values as JSON, each cut to a bound, so no span grows with its text.

/** The most of one text (a message, arguments, a result) a span carries when content is on. */
const CONTENT_CHARS = 8_000;

/** One part of a message as the GenAI conventions write it: text, a tool call or a tool's result. */
export type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string };

export interface SpanMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: MessagePart[];
}

/** One message of text, as `gen_ai.input.messages` or `gen_ai.output.messages` holds it. */
export function messages(role: 'user' | 'assistant', text: string): string {
  return messageList([{ role, parts: [{ type: 'text', content: text }] }]);
}

/**
 * Messages as JSON, each text cut at CONTENT_CHARS, and the whole held to a bound too: a long
 * conversation keeps its newest messages, which say what the model answered to.
 */
export function messageList(list: readonly SpanMessage[]): string {
  const cut = list.map((m) => ({ role: m.role, parts: m.parts.map(cutPart) }));
  let json = JSON.stringify(cut);
  while (json.length > CONTENT_CHARS * 4 && cut.length > 1) {
    cut.shift();
    json = JSON.stringify(cut);
  }
  return json;
}

/** A value as JSON, cut at CONTENT_CHARS; a value JSON cannot hold is said so. */
export function json(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? 'null').slice(0, CONTENT_CHARS);
  } catch {
    return '"[not serializable as JSON]"';
  }
}

function cutPart(part: MessagePart): MessagePart {
  switch (part.type) {
    case 'text':
      return { type: 'text', content: part.content.slice(0, CONTENT_CHARS) };
    case 'tool_call':
      return { ...part, arguments: part.arguments.slice(0, CONTENT_CHARS) };
    case 'tool_call_response':
      return { ...part, response: part.response.slice(0, CONTENT_CHARS) };
  }
}
