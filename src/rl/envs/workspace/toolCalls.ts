// The three tool-call formats a workspace environment speaks, chosen per run (envOptions.toolFormat):
//   call    — `<call>name(args)</call>` with Python literals, `<answer>...</answer>` ends (seed 003's shape)
//   hermes  — `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, `<answer>...</answer>` ends
//             (the Hermes / Qwen2.5 convention; results come back in <tool_response>)
//   code    — a ```python block that calls the tools as functions, `FINAL ANSWER: ...` ends (seed 000's shape)
// How each shows its tools in the prompt and wraps an observation. Model output is untrusted: every
// text yields an action or a format error, never an exception.
import { FINAL_ACTIONS } from '../../../shared/episodeStats';
import type { ParsedAction } from '../../../shared/types';
import { MAX_ACTION_CHARS, parseCodeAction } from '../parsers';
import type { StopSpec } from '../environment';
import type { ToolReply, ToolSpec } from './toolSession';

export const TOOL_FORMATS = ['call', 'hermes', 'code'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

/** Names an action cannot take: they end the episode (and the metrics count them as final). */
export const RESERVED_TOOL_NAMES: readonly string[] = [...FINAL_ACTIONS, 'execute_code'];

const CALL_RE = /<call>\s*([A-Za-z_]\w*)\s*\(([\s\S]*?)\)\s*<\/call>/;
const ANSWER_RE = /<answer>([\s\S]*?)<\/answer>/;
// No \s* around the group: with one, a long run of spaces after an unclosed <tool_call> (model output)
// backtracks in cubic time; JSON.parse ignores the whitespace anyway.
const HERMES_RE = /<tool_call>([\s\S]*?)<\/tool_call>/;

const formatError = (message: string): ParsedAction => ({ kind: 'format_error', message });

export function parseToolAction(raw: string, format: ToolFormat): ParsedAction {
  if (format === 'code') {
    const a = parseCodeAction(raw);
    return a.kind === 'tool' && a.name === 'finish' ? { kind: 'tool', name: 'answer', args: { text: String(a.args.answer) } } : a;
  }
  if (raw.trim() === '')
    return formatError(
      format === 'call'
        ? 'empty output: write <call>tool(args)</call> or <answer>...</answer>'
        : 'empty output: write <tool_call>{"name": ..., "arguments": {...}}</tool_call> or <answer>...</answer>',
    );
  const text = raw.length > MAX_ACTION_CHARS ? raw.slice(0, MAX_ACTION_CHARS) : raw;
  const answer = ANSWER_RE.exec(text);
  const callAt = format === 'call' ? text.search(/<call>/) : text.search(/<tool_call>/);
  // the first of a call and an answer wins: a model that answers after a call has not read the result
  if (answer && (callAt < 0 || answer.index < callAt)) return { kind: 'tool', name: 'answer', args: { text: answer[1]!.trim() } };
  const reserved = (name: string): ParsedAction => formatError(`"${name.slice(0, 40)}" is not a tool: end the episode with <answer>...</answer>`);
  if (format === 'call') {
    const m = CALL_RE.exec(text);
    if (m && RESERVED_TOOL_NAMES.includes(m[1]!)) return reserved(m[1]!);
    if (m) return { kind: 'tool', name: m[1]!, args: { text: m[2]!.trim() } };
    if (callAt >= 0) return formatError('malformed or unclosed call: use <call>tool(arguments)</call>');
    if (/<answer>/.test(text)) return formatError('unclosed answer: end it with </answer>');
    return formatError('no <call> or <answer> found');
  }
  const m = HERMES_RE.exec(text);
  if (!m)
    return formatError(
      callAt >= 0
        ? 'unclosed <tool_call>: end it with </tool_call>'
        : /<answer>/.test(text)
          ? 'unclosed answer: end it with </answer>'
          : 'no <tool_call> or <answer> found',
    );
  let call: unknown;
  try {
    call = JSON.parse(m[1]!);
  } catch {
    return formatError('the <tool_call> is not valid JSON: write {"name": "tool", "arguments": {...}}');
  }
  const c = call as { name?: unknown; arguments?: unknown };
  if (typeof call !== 'object' || call === null || typeof c.name !== 'string')
    return formatError('the <tool_call> needs a "name" (text) and "arguments" (an object)');
  const args = c.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return formatError('"arguments" must be a JSON object of parameter names and values');
  if (RESERVED_TOOL_NAMES.includes(c.name)) return reserved(c.name);
  return { kind: 'tool', name: c.name, args: { arguments: args } };
}

/** Where a language model's action ends, per format. */
export function stopFor(format: ToolFormat): StopSpec {
  if (format === 'call') return { strings: ['</call>', '</answer>'] };
  if (format === 'hermes') return { strings: ['</tool_call>', '</answer>'] };
  // the code environment's rule: a closed code block, or the line after FINAL ANSWER:
  return { strings: [], test: 'code-action' };
}

export type ToolsInPrompt = 'signatures' | 'json' | 'none';

/** The first observation: the tools as the format shows them, then the task's prompt. */
export function renderPrompt(prompt: string, tools: readonly ToolSpec[], format: ToolFormat, show: ToolsInPrompt): string {
  const body = prompt.endsWith('\n') ? prompt : `${prompt}\n`;
  if (show === 'none' || tools.length === 0) return body;
  if (show === 'json' || format === 'hermes') {
    const list = toolSchemas(tools)
      .map((t) => JSON.stringify(t))
      .join('\n');
    return `<tools>\n${list}\n</tools>\n${body}`;
  }
  const sigs = tools.map((t) => t.signature).join('; ');
  return format === 'code' ? `Functions: ${sigs}\n${body}` : `Tools: ${sigs}\n${body}`;
}

/** The observation text a reply becomes, in the format's wrapping. */
export function observationText(reply: ToolReply, format: ToolFormat): string {
  if (format === 'code') {
    const parts: string[] = [];
    if (reply.printed) parts.push(reply.printed.replace(/\n$/, ''));
    if (reply.kind !== 'code' && reply.error) parts.push(`[error] ${reply.error}`);
    parts.push(`[exit ${reply.exit ?? (reply.ok ? 0 : 1)}]`);
    return parts.join('\n');
  }
  const body = toolResultBody(reply);
  return format === 'call' ? `<obs>${body}</obs>` : `<tool_response>${body}</tool_response>`;
}

/** A call's result as the observation holds it, without the format's wrapping. */
export function toolResultBody(reply: ToolReply): string {
  const printed = reply.printed ? reply.printed : '';
  return reply.ok ? `${printed}${reply.result ?? ''}` : `error: ${reply.error ?? reply.kind ?? 'failed'}`;
}

/** The tools as function schemas, as chat templates' `tools` take them. */
export function toolSchemas(tools: readonly ToolSpec[]): Record<string, unknown>[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}
