// Where each observation belongs in a replayed turn's code (pure): the innermost traceback frame's
// line, else the last line of the code; and the message to show there.
import { codeOf, observationLinks, type TurnView } from '../../shared/linking';
import type { ResendResult } from '../../shared/agentRequestView';
import type { BackendMethods } from '../../shared/protocol/backendProtocol';
import { fence, messageText, oneLine, visibleText } from '../../shared/untrustedText';

export interface InlineObservation {
  /** 1-based line of the turn's code. */
  readonly line: number;
  /** Short text shown after the line (the error, or the first output line). */
  readonly message: string;
  /** The whole observation, for the hover. */
  readonly full: string;
}

export function inlineObservation(turns: readonly TurnView[], index: number): InlineObservation | undefined {
  const turn = turns[index];
  const code = turn ? codeOf(turn) : undefined;
  if (!turn || code === undefined) return undefined;
  const lines = code.replace(/\n$/, '').split('\n').length;
  const frame = observationLinks(turns, index).find((l) => l.kind === 'line' && l.innermost);
  const text = turn.observationText;
  const errorLine = text
    .split('\n')
    .reverse()
    .find((l) => /^\w*(Error|Exception)\b|^\w+Error:/.test(l.trim()));
  const firstOutput = text.split('\n').find((l) => l.trim() !== '' && !/^\[(stdout|stderr)\]$/.test(l.trim()));
  return {
    line: frame?.kind === 'line' ? frame.line : lines,
    message: (errorLine ?? firstOutput ?? '').trim().slice(0, 200),
    full: text,
  };
}

/** Turns of a trajectory that ran code (the ones a replay steps through). */
export function codeTurns(turns: readonly TurnView[]): number[] {
  return turns.map((t, i) => (codeOf(t) !== undefined ? i : -1)).filter((i) => i >= 0);
}

/** The notification after a re-run: same or different, and what the stored run asked for that was not used. */
export function rerunMessage(turn: number, r: BackendMethods['rerun']['result']): string {
  const verdict = r.same
    ? `re-run of turn ${turn} gives the same observation`
    : `re-run of turn ${turn} gives a different observation (see the Agent RL output)`;
  const notes = r.notes.length > 0 ? ` Not taken from the stored run: ${r.notes.join('; ')}.` : '';
  return messageText(`Agent RL: ${verdict}, at sandbox level ${r.level}.${notes}`, 800);
}

/** The text after the line an observation belongs to (an editor decoration). */
export function decorationText(obs: InlineObservation): string {
  return `  ⟵ ${oneLine(obs.message, 200)}`;
}

/** The decoration's hover: untrusted Markdown, the observation in a fence it cannot close, cut at `max`. */
export function observationHover(turn: number, full: string, max: number): string {
  return `Observation of turn ${turn}:\n\n${fence(visibleText(full, max, 'the inspector shows all'))}`;
}

/** What a re-run writes to the output channel: the observation it got, whole, and each note. */
export function rerunOutput(trajectoryId: number, turn: number, r: BackendMethods['rerun']['result']): string[] {
  return [
    `re-run of trajectory ${trajectoryId} turn ${turn} (level ${r.level}, ${visibleText(r.python, 0)}):\n${visibleText(r.observationText, 0)}`,
    ...r.notes.map((note) => `  note: ${visibleText(note, 0)}`),
  ];
}

/** The notification after an agent program's request was sent again: the answer now beside the stored one. */
export function resendMessage(r: ResendResult): string {
  const calls = r.toolCalls.length > 0 ? `; tool calls ${r.toolCalls.map((c) => `${oneLine(c.name, 60)}(${oneLine(c.arguments, 120)})`).join(', ')}` : '';
  return messageText(
    `Agent RL: turn ${r.turn}'s request sent again (${r.greedy ? 'greedy' : 'sampled'}): "${oneLine(r.content ?? '', 200)}"${calls}; stored: "${oneLine(r.stored, 200)}"`,
    800,
  );
}

/** What re-sending a request writes to the output channel: the whole answer and the stored one. */
export function resendOutput(r: ResendResult): string[] {
  return [
    `request of trajectory ${r.trajectoryId} turn ${r.turn} (run ${r.runId}, ${r.messages} messages${r.tools.length ? `, tools ${r.tools.map((t) => visibleText(t, 0)).join(', ')}` : ''}) sent again to ${visibleText(r.checkpoint, 0)} (${r.greedy ? 'greedy' : 'sampled'}; ${r.promptTokens} prompt tokens, ${r.completionTokens} generated, finish ${r.finish}):`,
    `  answer now: ${visibleText(r.text, 0)}`,
    ...r.toolCalls.map((c) => `  tool call: ${visibleText(c.name, 0)}(${visibleText(c.arguments, 0)})`),
    `  stored answer: ${visibleText(r.stored, 0)}`,
  ];
}
