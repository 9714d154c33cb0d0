// Observation → action links for the trajectory inspector (pure; the webview and tests use it):
// - a traceback's `File "main.py", line N` → line N of the code that turn ran (the last such frame is
//   where it failed);
// - a tool result (`<obs>…</obs>`, `<tool_response>…</tool_response>`) → the call it answers (the same turn's action);
// - an error observation (exit code ≠ 0, timeout, tool error, format error) → the turn that caused it.

import { FINAL_ACTIONS } from './episodeStats';

export type ObservationLink =
  | { readonly kind: 'line'; readonly turn: number; readonly line: number; readonly start: number; readonly end: number; readonly innermost: boolean }
  | { readonly kind: 'call'; readonly turn: number }
  | { readonly kind: 'cause'; readonly turn: number; readonly reason: string };

export interface TurnView {
  readonly actionText: string;
  readonly action: unknown;
  readonly observationText: string;
  readonly observation: Readonly<Record<string, unknown>>;
}

/**
 * The code a turn ran, else undefined: a tool call with a `code` string argument (`execute_code` here;
 * verl's `code_interpreter` in imported runs).
 */
export function codeOf(turn: TurnView): string | undefined {
  const a = turn.action as { kind?: string; name?: string; args?: { code?: unknown } } | null;
  return a && a.kind === 'tool' && typeof a.args?.code === 'string' ? a.args.code : undefined;
}

/**
 * The model's whole action around the code it ran: the text before the (last) code block — its prose
 * and the opening fence — the code, and the text after. Undefined for a turn that ran no code.
 */
export function actionParts(turn: TurnView): { readonly before: string; readonly code: string; readonly after: string } | undefined {
  const code = codeOf(turn);
  if (code === undefined) return undefined;
  const at = code === '' ? -1 : turn.actionText.lastIndexOf(code);
  return at < 0 ? { before: turn.actionText, code, after: '' } : { before: turn.actionText.slice(0, at), code, after: turn.actionText.slice(at + code.length) };
}

// Our sandbox runs code as main.py; SandboxFusion as a temporary file (/tmp/tmpXXXX/tmpYYYY.py).
const FRAME = /File "(?:main\.py|\/tmp\/[^"]*\/tmp\w+\.py)", line (\d+)/g;

export function observationLinks(turns: readonly TurnView[], index: number): ObservationLink[] {
  const turn = turns[index];
  if (!turn) return [];
  const links: ObservationLink[] = [];
  const code = codeOf(turn);
  if (code !== undefined) {
    const lines = code.split('\n').length;
    const frames = [...turn.observationText.matchAll(FRAME)].filter((m) => Number(m[1]) >= 1 && Number(m[1]) <= lines);
    frames.forEach((m, i) =>
      links.push({ kind: 'line', turn: index, line: Number(m[1]), start: m.index, end: m.index + m[0].length, innermost: i === frames.length - 1 }),
    );
  }
  const a = turn.action as { kind?: string; name?: string } | null;
  // a tool's result (the calculator's <obs>, a workspace tool's <obs> or Hermes <tool_response>) answers this turn's call
  if (
    a?.kind === 'tool' &&
    code === undefined &&
    !FINAL_ACTIONS.has(a.name ?? '') &&
    /^<(obs|tool_response)>/.test(turn.observationText) &&
    !/^<(obs|tool_response)>error/.test(turn.observationText)
  ) {
    links.push({ kind: 'call', turn: index });
  }
  const o = turn.observation;
  const reason =
    a?.kind === 'format_error' || o.formatError === true
      ? 'format error in this turn’s output'
      : o.timedOut === true
        ? 'this turn’s code timed out'
        : typeof o.exitCode === 'number' && o.exitCode !== 0
          ? `this turn’s code exited with code ${o.exitCode}`
          : typeof o.error === 'string'
            ? `this turn’s tool call failed (${o.error})`
            : undefined;
  if (reason) links.push({ kind: 'cause', turn: index, reason });
  return links;
}
