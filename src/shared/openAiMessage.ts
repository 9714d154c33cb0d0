// An agent program's message (AgentMessage, as an episode stores it) in OpenAI's chat format: the one
// conversion that both the agent environment (the final conversation a reward file reads, rl/envs/agent)
// and the chat format (what a chat template renders, rl/policies/lm/chatFormat.ts) use. It lives in
// shared/ because rl/envs may not import rl/policies (scripts/layers.mjs).
import type { AgentMessage } from './types';

/** One tool call as OpenAI writes it; `arguments` is JSON text on the wire, an object where a chat template reads it. */
export type OpenAiToolCall<A> = {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: A };
};

/** A message in OpenAI's chat format: snake_case fields, each absent when the message has none (a type, not an interface: a reward trajectory holds it as a plain record). */
export type OpenAiMessage<A = string> = {
  readonly role: AgentMessage['role'];
  readonly content: string;
  /** Only on an assistant message that calls tools (never an empty list). */
  readonly tool_calls?: readonly OpenAiToolCall<A>[];
  readonly tool_call_id?: string;
  readonly name?: string;
};

/**
 * The message as OpenAI's API writes it: tool calls with `type: "function"` and their name and
 * arguments under `function`, `tool_call_id` on a tool result. The keys come in this order (role,
 * content, tool_calls, tool_call_id, name), which JSON text of it keeps. `args` turns a call's
 * arguments (the JSON text the program sent) into what the reader wants; by default the text as is.
 */
export function openAiMessage(m: AgentMessage): OpenAiMessage;
export function openAiMessage<A>(m: AgentMessage, args: (text: string) => A): OpenAiMessage<A>;
export function openAiMessage<A>(m: AgentMessage, args?: (text: string) => A): OpenAiMessage<A | string> {
  const argumentsOf = args ?? ((text: string): string => text);
  return {
    role: m.role,
    content: m.content,
    ...(m.toolCalls?.length
      ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: argumentsOf(c.arguments) } })) }
      : {}),
    ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
    ...(m.name !== undefined ? { name: m.name } : {}),
  };
}
