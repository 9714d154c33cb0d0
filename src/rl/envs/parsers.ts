// Action parsers for the text protocols. Model output is untrusted: every input (empty, huge, unclosed
// tags, several actions, text after the answer, replacement characters from invalid UTF-8) yields a
// defined action or a format error, never an exception.
import type { ParsedAction } from '../../shared/types';

/** Longer outputs are cut before any regex runs (and the cut is reported). */
export const MAX_ACTION_CHARS = 64 * 1024;

const CALL_RE = /<call>\s*([A-Za-z_]\w*)\s*\(([^()<>]*)\)\s*<\/call>/;
const ANSWER_RE = /<answer>\s*\\boxed\{\s*(-?\d+)\s*\}\s*<\/answer>/;

function formatError(message: string): ParsedAction {
  return { kind: 'format_error', message };
}

/**
 * Calculator protocol (seed 003): `<call>op(a,b)</call>` or `<answer>\boxed{N}</answer>`.
 * An answer wins over calls in the same output (the episode ends on it); of several calls, the first.
 */
export function parseCalculatorAction(raw: string): ParsedAction {
  if (raw.trim() === '') return formatError('empty output: write <call>op(a,b)</call> or <answer>\\boxed{N}</answer>');
  const text = raw.length > MAX_ACTION_CHARS ? raw.slice(0, MAX_ACTION_CHARS) : raw;
  const answer = ANSWER_RE.exec(text);
  if (answer) {
    return { kind: 'tool', name: 'answer', args: { value: Number(answer[1]), trailing: text.slice(answer.index + answer[0].length).trim().length > 0 } };
  }
  const call = CALL_RE.exec(text);
  if (call) {
    const args = call[2]!.split(',').map((s) => s.trim());
    return { kind: 'tool', name: 'call', args: { op: call[1]!, rawArgs: call[2]!, args } };
  }
  if (/<answer>/.test(text)) return formatError('malformed answer: use <answer>\\boxed{N}</answer> with an integer N');
  if (/<call>/.test(text)) return formatError('malformed or unclosed call: use <call>op(a,b)</call>');
  return formatError('no <call> or <answer> found');
}

const FENCE_RE = /```(?:python|py)?[^\S\n]*\n([\s\S]*?)```/g;
const FINAL_RE = /FINAL ANSWER:\s*([\s\S]*)$/;

/**
 * Code protocol (seed 000): a fenced ```python block → execute_code (the last complete block when
 * there are several: models often restate, then correct); `FINAL ANSWER: ...` → finish; an unclosed
 * fence → its content up to the end; no fence and no final answer → format error.
 */
export function parseCodeAction(raw: string): ParsedAction {
  if (raw.trim() === '') return formatError('empty output: write a ```python block to run code, or FINAL ANSWER: ... to finish');
  const truncated = raw.length > MAX_ACTION_CHARS;
  const text = truncated ? raw.slice(0, MAX_ACTION_CHARS) : raw;
  const blocks = [...text.matchAll(FENCE_RE)].map((m) => m[1]!);
  if (blocks.length > 0) {
    return { kind: 'tool', name: 'execute_code', args: { code: blocks[blocks.length - 1]!, blocks: blocks.length, truncated } };
  }
  const open = /```(?:python|py)?[^\S\n]*\n([\s\S]*)$/.exec(text);
  if (open && open[1]!.trim() !== '') return { kind: 'tool', name: 'execute_code', args: { code: open[1]!, blocks: 1, unclosed: true, truncated } };
  const final = FINAL_RE.exec(text);
  if (final) return { kind: 'tool', name: 'finish', args: { answer: final[1]!.trim() } };
  return formatError('no ```python block and no FINAL ANSWER: found');
}

/**
 * Tests on the decoded text that end an action where stop strings cannot (named, so that replica
 * threads rebuild them from the name): a code action ends with a closed code block, or with the line
 * after FINAL ANSWER:.
 */
export const STOP_TESTS = {
  'code-action': (text: string): boolean => /```(?:python|py)?[^\S\n]*\n[\s\S]*?```/.test(text) || /FINAL ANSWER:[^\n]*\n/.test(text),
} as const satisfies Readonly<Record<string, (text: string) => boolean>>;
export type StopTest = keyof typeof STOP_TESTS;
