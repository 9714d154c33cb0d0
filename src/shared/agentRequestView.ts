// What the inspector shows of an agent program's request (env "agent") above the turn that answered it:
// the messages that entered the context with this request (after the earlier ones it continues, or the
// whole conversation when it began a new segment, with where the program changed its history), and the
// tools it offered. A turn stores the request it answered as the first turn's action's `args.request`
// or the previous turn's observation data's `request`, holding only the messages it added. Stored runs
// are untrusted: anything not shaped as a request is no view; texts are returned as stored (the view
// sets them with textContent through the one escaping rule).

import { isObject } from './protocol/guards';

export interface AgentRequestView {
  /** "request 2 · continues 5 messages" or "request 3 · new segment: …". */
  readonly heading: string;
  /** The messages this request added to the context (all of them for a new segment). */
  readonly messages: readonly { readonly role: string; readonly text: string }[];
  /** The tools' names, in order. */
  readonly tools: readonly string[];
}

function requestOf(v: unknown): Record<string, unknown> | undefined {
  return isObject(v) && Array.isArray(v.messages) && Array.isArray(v.tools) ? v : undefined;
}

/** A message's text as the view shows it: its content, and its calls as name(arguments). */
function messageText(m: Record<string, unknown>): string {
  const content = typeof m.content === 'string' ? m.content : '';
  const calls = Array.isArray(m.toolCalls)
    ? m.toolCalls.filter(isObject).map((c) => `${typeof c.name === 'string' ? c.name : '?'}(${typeof c.arguments === 'string' ? c.arguments : ''})`)
    : [];
  return [content, ...calls].filter((x) => x !== '').join('\n');
}

export function agentRequestView(turns: readonly { readonly action: unknown; readonly observation: unknown }[], index: number): AgentRequestView | undefined {
  const source = index === 0 ? turns[0]?.action : turns[index - 1]?.observation;
  const holder = isObject(source) ? (index === 0 ? source.args : source) : undefined;
  const r = requestOf(isObject(holder) ? holder.request : undefined);
  if (!r) return undefined;
  // stored: the messages the request added to the context, after the `continuesFrom` earlier ones
  const added = (r.messages as unknown[]).filter(isObject);
  const from = typeof r.continuesFrom === 'number' && Number.isInteger(r.continuesFrom) && r.continuesFrom > 0 ? r.continuesFrom : 0;
  const rewrite = typeof r.rewrite === 'string' ? r.rewrite : undefined;
  const heading =
    from > 0
      ? `request ${index + 1} · continues the context (${from} earlier message${from === 1 ? '' : 's'})`
      : `request ${index + 1} · ${index === 0 ? 'the conversation' : `new segment${rewrite ? `: ${rewrite}` : ''}`}`;
  const tools = (r.tools as unknown[]).filter(isObject).map((t) => (isObject(t.function) && typeof t.function.name === 'string' ? t.function.name : '?'));
  return {
    heading,
    messages: added.map((m) => ({ role: typeof m.role === 'string' ? m.role : '?', text: messageText(m) })),
    tools,
  };
}
