// Splits one decoded verl response (the `output` of a rollout dump line) into turns. verl decodes the
// response ids with skip_special_tokens=True, so with Qwen tokenizers the ChatML markers
// (<|im_start|>, <|im_end|>, special tokens) are gone and only the role words and the Hermes tags
// (<tool_call>, <tool_response>: ordinary added tokens) are left:
//   …</tool_call>user\n<tool_response>\nOUT\n</tool_response>\nassistant\nNEXT…
// With a tokenizer that keeps the markers (or a dump written without skipping them) the text is
//   …</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nOUT\n</tool_response><|im_end|>\n<|im_start|>assistant\nNEXT…
// Both give the same turns: each assistant message is an action, the messages after it (tool
// responses, interaction feedback) its observation. Untrusted text: nothing here throws on any input.
import type { ParsedAction } from '../../shared/types';

export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

export interface SplitTurn {
  readonly actionText: string;
  readonly action: ParsedAction;
  readonly observationText: string;
  readonly observation: Record<string, unknown>;
}

const IM_START = '<|im_start|>';
const RESPONSE_BLOCK = /<tool_response>([\s\S]*?)(?:<\/tool_response>|$)/g;
const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const TRACEBACK = /Traceback \(most recent call last\):/;

const stripEnd = (s: string): string => s.replace(/(?:<\|im_end\|>|<\|endoftext\|>)\s*$/, '').replace(/\s+$/, '');

/** Messages of a response that still has its ChatML markers; the first one (before any marker) is the assistant's. */
function splitChatMl(text: string): ChatMessage[] {
  const parts = text.split(IM_START);
  const out: ChatMessage[] = [];
  const first = stripEnd(parts[0]!);
  if (first.trim() !== '') out.push({ role: 'assistant', content: first });
  for (const part of parts.slice(1)) {
    const nl = part.indexOf('\n');
    const role = (nl < 0 ? part : part.slice(0, nl)).trim();
    const content = stripEnd(nl < 0 ? '' : part.slice(nl + 1));
    out.push({ role: role === 'user' && /^\s*<tool_response>/.test(content) ? 'tool' : role || 'unknown', content });
  }
  return out;
}

/** Messages of a response whose markers were skipped: tool-response blocks delimit the assistant messages. */
function splitByTags(text: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  let at = 0;
  let pendingTool: string[] = [];
  const flushTool = (): void => {
    if (pendingTool.length) out.push({ role: 'tool', content: pendingTool.join('\n') });
    pendingTool = [];
  };
  for (const m of text.matchAll(RESPONSE_BLOCK)) {
    const between = text.slice(at, m.index);
    // What separates two blocks of one tool message is whitespace and at most a role word.
    if (pendingTool.length && /^\s*(?:(?:user|tool)\s*)?$/.test(between)) {
      pendingTool.push(`<tool_response>${m[1]!}</tool_response>`);
    } else {
      flushTool();
      const assistant = between
        .replace(/^\s*assistant\n/, '')
        .replace(/(?:user|tool)\n?$/, '')
        .replace(/\s+$/, '');
      if (assistant.trim() !== '' || out.length === 0) out.push({ role: 'assistant', content: assistant });
      pendingTool.push(`<tool_response>${m[1]!}</tool_response>`);
    }
    at = m.index + m[0].length;
  }
  flushTool();
  const rest = text
    .slice(at)
    .replace(/^\s*assistant\n/, '')
    .replace(/\s+$/, '');
  if (rest.trim() !== '' || out.length === 0) out.push({ role: 'assistant', content: rest });
  return out;
}

export function splitMessages(text: string): ChatMessage[] {
  return text.includes(IM_START) ? splitChatMl(text) : splitByTags(text);
}

/** The text inside a tool message's <tool_response> blocks (several joined by a newline). */
function toolText(content: string): string {
  const blocks = [...content.matchAll(RESPONSE_BLOCK)].map((m) => m[1]!.replace(/^\n/, '').replace(/\n$/, ''));
  return blocks.length ? blocks.join('\n') : content;
}

/**
 * The action of an assistant message: its first Hermes tool call ({"name", "arguments"}; arguments as
 * an object or a JSON string), `answer` when it makes none, a format error when a call is not JSON.
 */
export function parseHermesAction(content: string): ParsedAction {
  const calls = [...content.matchAll(TOOL_CALL)];
  if (calls.length === 0) {
    return content.includes('<tool_call>') ? { kind: 'format_error', message: '<tool_call> without </tool_call>' } : { kind: 'tool', name: 'answer', args: {} };
  }
  try {
    const call = JSON.parse(calls[0]![1]!) as { name?: unknown; arguments?: unknown };
    if (typeof call.name !== 'string') return { kind: 'format_error', message: 'tool call without a "name" string' };
    const raw = typeof call.arguments === 'string' ? (JSON.parse(call.arguments) as unknown) : (call.arguments ?? {});
    const args = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { value: raw };
    return { kind: 'tool', name: call.name, args: calls.length > 1 ? { ...args, parallelCalls: calls.length } : args };
  } catch (e) {
    return { kind: 'format_error', message: `tool call is not JSON: ${(e as Error).message}` };
  }
}

/** Turns of one response: each assistant message with the messages that answered it. */
export function splitTurns(output: string): SplitTurn[] {
  const turns: { actionText: string; replies: ChatMessage[] }[] = [];
  for (const m of splitMessages(output)) {
    if (m.role === 'assistant' || turns.length === 0)
      turns.push({ actionText: m.role === 'assistant' ? m.content : '', replies: m.role === 'assistant' ? [] : [m] });
    else turns[turns.length - 1]!.replies.push(m);
  }
  return turns.map((t) => {
    const observationText = t.replies.map((r) => (r.role === 'tool' ? toolText(r.content) : r.content)).join('\n');
    const observation: Record<string, unknown> = t.replies.length === 0 ? { final: true } : { roles: t.replies.map((r) => r.role) };
    if (TRACEBACK.test(observationText)) observation.error = 'a Python traceback in the tool response';
    return { actionText: t.actionText, action: parseHermesAction(t.actionText), observationText, observation };
  });
}
