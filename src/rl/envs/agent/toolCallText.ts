// A chat model's answer as an OpenAI client reads it: the text, and the function calls written in the
// model's own tool-call format — Hermes / Qwen (`<tool_call>{"name": …, "arguments": {…}}</tool_call>`,
// any number of them) or Llama 3 (the whole answer one JSON object `{"name": …, "parameters": {…}}`,
// after `<|python_tag|>` or not). Model output is untrusted: whatever it wrote becomes an answer, never
// an exception; a call that does not parse stays in the text, where the program sees it as written.
import type { AgentMessage } from '../../../shared/types';

export interface ToolCallOut {
  readonly id: string;
  readonly name: string;
  /** The arguments as JSON text, as OpenAI's API sends them. */
  readonly arguments: string;
}

export interface ParsedAnswer {
  /** The text outside the calls (null when there is only calls, as OpenAI's API sends it). */
  readonly content: string | null;
  readonly toolCalls: readonly ToolCallOut[];
}

const HERMES = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function call(raw: unknown, argsKey: 'arguments' | 'parameters', id: () => string): ToolCallOut | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const c = raw as Record<string, unknown>;
  const args = c[argsKey] ?? (argsKey === 'parameters' ? c.arguments : undefined) ?? {};
  if (typeof c.name !== 'string' || !NAME.test(c.name)) return undefined;
  if (typeof args === 'string') return { id: id(), name: c.name, arguments: args };
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  return { id: id(), name: c.name, arguments: JSON.stringify(args) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The answer's text and calls. `names`: the request's tools (a call to another name stays text);
 * `id`: makes each call's id.
 */
export function parseAnswer(text: string, names: ReadonlySet<string>, id: () => string): ParsedAnswer {
  if (names.size === 0) return { content: text, toolCalls: [] };
  const calls: ToolCallOut[] = [];
  let rest = '';
  let last = 0;
  for (const m of text.matchAll(HERMES)) {
    const c = call(parseJson(m[1]!.trim()), 'arguments', id);
    if (!c || !names.has(c.name)) continue;
    calls.push(c);
    rest += text.slice(last, m.index);
    last = m.index + m[0].length;
  }
  if (calls.length > 0) {
    rest += text.slice(last);
    return { content: rest.trim() === '' ? null : rest.trim(), toolCalls: calls };
  }
  const bare = text.replace(/^\s*<\|python_tag\|>/, '').trim();
  if (bare.startsWith('{') && bare.endsWith('}')) {
    const c = call(parseJson(bare), 'parameters', id);
    if (c && names.has(c.name)) return { content: null, toolCalls: [c] };
  }
  return { content: text, toolCalls: [] };
}

/** The same JSON value (key order aside): arguments the program sent back are compared by meaning. */
function sameJson(a: string, b: string): boolean {
  const pa = parseJson(a),
    pb = parseJson(b);
  if (pa === undefined || pb === undefined) return a === b;
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(canon(pa)) === JSON.stringify(canon(pb));
}

/**
 * Whether the program sent the policy's answer back as it was given: the same text (outer whitespace
 * aside) and the same calls (names and arguments; ids aside). Where it did, the episode's tokens stand
 * as generated and the request continues them; where not, the program rewrote its history.
 */
export function sameAnswer(sent: AgentMessage, given: ParsedAnswer): boolean {
  if (sent.role !== 'assistant') return false;
  if ((sent.content ?? '').trim() !== (given.content ?? '').trim()) return false;
  const calls = sent.toolCalls ?? [];
  return (
    calls.length === given.toolCalls.length &&
    calls.every((c, i) => c.name === given.toolCalls[i]!.name && sameJson(c.arguments, given.toolCalls[i]!.arguments))
  );
}

/** The same message (a request's earlier message against the one before it). */
export function sameMessage(a: AgentMessage, b: AgentMessage): boolean {
  if (a.role !== b.role || a.content !== b.content || (a.toolCallId ?? '') !== (b.toolCallId ?? '')) return false;
  const ca = a.toolCalls ?? [],
    cb = b.toolCalls ?? [];
  return ca.length === cb.length && ca.every((c, i) => c.name === cb[i]!.name && sameJson(c.arguments, cb[i]!.arguments));
}
