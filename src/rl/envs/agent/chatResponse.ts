// Answers in OpenAI's shapes: a completion's JSON body, the chunks of a streamed one (server-sent
// events), and the error body. The handler's result (ChatResult) comes in; JSON objects go out, for
// endpoint.ts to send.
import type { ChatRequest, ChatToolCall, EndpointError, Json } from './chatRequest';

export interface ChatTokenLogprob {
  readonly token: string;
  readonly logprob: number;
  /** The most likely tokens at this position (top_logprobs); [] when not given. */
  readonly top?: readonly { readonly token: string; readonly logprob: number }[];
}

export interface ChatChoice {
  readonly content: string | null;
  readonly toolCalls: readonly ChatToolCall[];
  readonly finishReason: 'stop' | 'length' | 'tool_calls';
  /** One entry per sampled token, when the request asked for logprobs. */
  readonly logprobs?: readonly ChatTokenLogprob[];
}

export interface ChatResult {
  /** Exactly request.n choices. */
  readonly choices: readonly ChatChoice[];
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export const errorBody = (e: EndpointError): Json => ({ error: { message: e.message, type: e.type, param: e.param, code: e.code } });

function logprobsOf(c: ChatChoice): Json | null {
  if (c.logprobs === undefined) return null;
  const entry = (t: { token: string; logprob: number }): Json => ({ token: t.token, logprob: t.logprob, bytes: [...Buffer.from(t.token, 'utf8')] });
  return { content: c.logprobs.map((t) => ({ ...entry(t), top_logprobs: (t.top ?? []).map(entry) })), refusal: null };
}

const toolCallsOf = (c: ChatChoice): Json[] => c.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }));
const usageOf = (r: ChatResult): Json => ({
  prompt_tokens: r.promptTokens,
  completion_tokens: r.completionTokens,
  total_tokens: r.promptTokens + r.completionTokens,
});

export interface Reply {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

export function completionBody(reply: Reply, request: ChatRequest, result: ChatResult): Json {
  return {
    ...reply,
    object: 'chat.completion',
    choices: result.choices.map((c, index) => ({
      index,
      message: { role: 'assistant', content: c.content, refusal: null, ...(c.toolCalls.length > 0 ? { tool_calls: toolCallsOf(c) } : {}) },
      logprobs: request.logprobs ? logprobsOf(c) : null,
      finish_reason: c.finishReason,
    })),
    usage: usageOf(result),
  };
}

/**
 * The chunks of a streamed answer, choice by choice: the role, the content in one chunk (with its
 * logprobs), each tool call as its id and name then its arguments (OpenAI's own split), the finish
 * reason; then the usage chunk when asked for.
 */
export function completionChunks(reply: Reply, request: ChatRequest, result: ChatResult): Json[] {
  const usage = request.includeUsage ? { usage: null } : {};
  const chunk = (index: number, delta: Json, finish: string | null = null, logprobs: Json | null = null): Json => ({
    ...reply,
    object: 'chat.completion.chunk',
    choices: [{ index, delta, logprobs, finish_reason: finish }],
    ...usage,
  });
  const out: Json[] = [];
  result.choices.forEach((c, i) => {
    const logprobs = request.logprobs ? logprobsOf(c) : null;
    const text = c.content ?? '';
    out.push(chunk(i, { role: 'assistant', content: c.content === null ? null : '', refusal: null }, null, text === '' ? logprobs : null));
    if (text !== '') out.push(chunk(i, { content: text }, null, logprobs));
    c.toolCalls.forEach((t, k) => {
      out.push(chunk(i, { tool_calls: [{ index: k, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }));
      if (t.arguments !== '') out.push(chunk(i, { tool_calls: [{ index: k, function: { arguments: t.arguments } }] }));
    });
    out.push(chunk(i, {}, c.finishReason));
  });
  if (request.includeUsage) out.push({ ...reply, object: 'chat.completion.chunk', choices: [], usage: usageOf(result) });
  return out;
}
