// What the inspector shows of an agent program's request (env "agent") above the turn that answered it:
// the messages that entered the context with this request (after the earlier ones it continues, or the
// whole conversation when it began a new segment, with where the program changed its history), and the
// tools it offered. A turn stores the request it answered as the first turn's action's `args.request`
// or the previous turn's observation data's `request`, holding only the messages it added. Stored runs
// are untrusted: anything not shaped as a request is no view; texts are returned as stored (the view
// sets them with textContent through the one escaping rule).

import { isObject } from './protocol/guards';
import type { AgentMessage, AgentRequest } from './types';

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

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** A stored message as the chat template takes it, or undefined when it is not shaped as one. */
function storedMessage(v: unknown): AgentMessage | undefined {
  if (!isObject(v) || typeof v.role !== 'string' || !ROLES.has(v.role) || typeof v.content !== 'string') return undefined;
  const listed: unknown[] = Array.isArray(v.toolCalls) ? v.toolCalls : [];
  const calls = listed
    .filter(isObject)
    .flatMap((c) =>
      typeof c.id === 'string' && typeof c.name === 'string' && typeof c.arguments === 'string' ? [{ id: c.id, name: c.name, arguments: c.arguments }] : [],
    );
  if (calls.length !== listed.length) return undefined;
  return {
    role: v.role as AgentMessage['role'],
    content: v.content,
    ...(calls.length ? { toolCalls: calls } : {}),
    ...(typeof v.toolCallId === 'string' ? { toolCallId: v.toolCallId } : {}),
    ...(typeof v.name === 'string' ? { name: v.name } : {}),
  };
}

/** The policy's answer of a stored agent turn as the next request holds it (its content, and every call it generated). */
function answerMessage(action: unknown): AgentMessage | undefined {
  if (!isObject(action) || action.kind !== 'tool' || !isObject(action.args)) return undefined;
  const a = action.args;
  // a plain answer holds no calls (a program's tool may itself be called "answer")
  if (!Array.isArray(a.calls)) return typeof a.text === 'string' ? { role: 'assistant', content: a.text } : undefined;
  const calls = Array.isArray(a.generated) ? a.generated : a.calls;
  return storedMessage({ role: 'assistant', content: typeof a.content === 'string' ? a.content : '', toolCalls: calls });
}

/**
 * The whole conversation of the request a stored agent turn answered, rebuilt from what the turns store
 * (each request holds only the messages it added after `continuesFrom` earlier ones): the earlier
 * request's messages, the policy's answer, then the added ones. A string says why it cannot be rebuilt
 * (not an agent turn, or stored requests that do not fit together).
 */
export function storedRequest(
  turns: readonly { readonly action: unknown; readonly observation: unknown }[],
  index: number,
): Pick<AgentRequest, 'messages' | 'tools' | 'maxTokens' | 'stop'> | string {
  if (!Number.isInteger(index) || index < 0 || index >= turns.length) return `turn ${index} is not one of the trajectory's ${turns.length} turns`;
  let messages: AgentMessage[] = [];
  let tools: Readonly<Record<string, unknown>>[] = [];
  let limits: Pick<AgentRequest, 'maxTokens' | 'stop'> = {};
  for (let k = 0; k <= index; k++) {
    const source = k === 0 ? turns[0]?.action : turns[k - 1]?.observation;
    const holder = isObject(source) ? (k === 0 ? source.args : source) : undefined;
    const r = requestOf(isObject(holder) ? holder.request : undefined);
    if (!r) return `turn ${k} holds no agent program's request (not a run of env "agent"?)`;
    const added = (r.messages as unknown[]).map(storedMessage);
    if (added.some((m) => m === undefined)) return `turn ${k}'s stored request has a message that is not a chat message`;
    const from = typeof r.continuesFrom === 'number' && Number.isInteger(r.continuesFrom) && r.continuesFrom > 0 ? r.continuesFrom : 0;
    if (from > 0) {
      const answer = answerMessage(turns[k - 1]?.action);
      if (!answer || from !== messages.length + 1)
        return `turn ${k}'s stored request continues ${from} messages, and the turns before it hold ${messages.length + (answer ? 1 : 0)}`;
      messages = [...messages, answer, ...(added as AgentMessage[])];
    } else messages = [...(added as AgentMessage[])];
    tools = (r.tools as unknown[]).filter(isObject);
    const stop = Array.isArray(r.stop) ? r.stop.filter((x): x is string => typeof x === 'string') : [];
    limits = {
      ...(typeof r.maxTokens === 'number' && Number.isInteger(r.maxTokens) && r.maxTokens > 0 ? { maxTokens: r.maxTokens } : {}),
      ...(stop.length ? { stop } : {}),
    };
  }
  if (messages.length === 0) return `turn ${index}'s stored request has no messages`;
  return { messages, tools, ...limits };
}

/** A stored agent request sent again to the run's policy (store/resendRequest.ts; `agent-rl request`, the Runs tree). */
export interface ResendResult {
  readonly runId: number;
  readonly trajectoryId: number;
  readonly turn: number;
  readonly checkpoint: string;
  readonly greedy: boolean;
  /** The conversation sent: how many messages, and the tools offered. */
  readonly messages: number;
  readonly tools: readonly string[];
  /** The answer stored with the turn (what the program got then). */
  readonly stored: string;
  /** The policy's answer now: its raw text, the content and the calls the endpoint would return. */
  readonly text: string;
  readonly content: string | null;
  readonly toolCalls: readonly { readonly name: string; readonly arguments: string }[];
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly finish: string;
}
