// What the inspector shows of a trajectory's group exchange with the judge (reward.judge, issue 51):
// a heading with the outcome (scored, cached, or the error), this trajectory's score, and the request's
// messages and the answer's content as text blocks. Everything here is stored, untrusted text: the page
// sets it with el()'s textContent through the one clipping rule (untrustedText.ts), never as markup.
import { count, duration, sig } from './format';
import type { JudgeExchangeRecord } from './protocol/backendProtocol';

export interface JudgeExchangeView {
  readonly heading: string;
  /** The rows in order: label and text, `block` for multi-line text (a pre). */
  readonly rows: readonly { readonly label: string; readonly text: string; readonly block: boolean }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The request's messages as (role, content) pairs; the raw body when it is not the shape we send. */
function requestRows(request: string): JudgeExchangeView['rows'] {
  const body = parse(request);
  const messages = isObject(body) && Array.isArray(body.messages) ? body.messages : undefined;
  if (!messages) return [{ label: 'request', text: request, block: true }];
  return messages.map((m: unknown) => ({
    label: `request ${isObject(m) && typeof m.role === 'string' ? m.role : '?'}`,
    text: isObject(m) && typeof m.content === 'string' ? m.content : JSON.stringify(m),
    block: true,
  }));
}

/** The answer's message content where it is a chat-completions body, else the body as received. */
function answerText(answer: string): string {
  const body = parse(answer);
  const choice = isObject(body) && Array.isArray(body.choices) ? (body.choices[0] as unknown) : undefined;
  const content = isObject(choice) && isObject(choice.message) ? choice.message.content : undefined;
  return typeof content === 'string' ? content : answer;
}

/** The view of `x` for the trajectory at `indexInGroup` in its group. */
export function judgeExchangeView(x: JudgeExchangeRecord, indexInGroup: number): JudgeExchangeView {
  const scores = x.scores !== undefined ? parse(x.scores) : undefined;
  const own = isObject(scores) ? scores[`t${indexInGroup}`] : undefined;
  const how = x.cached ? 'from the cache' : `${duration(x.latencyMs)}, ${count(x.tries)} ${x.tries === 1 ? 'try' : 'tries'}, ${count(x.tokens)} tokens`;
  const heading = x.error !== undefined ? `judge: failed for this group (${how})` : `judge: t${indexInGroup} scored ${sig(own, 3, '?')} (${how})`;
  return {
    heading,
    rows: [
      ...(x.error !== undefined ? [{ label: 'error', text: x.error, block: false }] : []),
      ...(x.scores !== undefined ? [{ label: 'scores', text: x.scores, block: false }] : []),
      ...requestRows(x.request),
      ...(x.answer !== undefined ? [{ label: 'answer', text: answerText(x.answer), block: true }] : []),
    ],
  };
}
