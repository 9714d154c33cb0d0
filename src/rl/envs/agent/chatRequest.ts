// A chat-completions request as the agent endpoint (endpoint.ts) reads it: the request's types once
// checked (parseChatRequest.ts checks them), the limits on its size, and the error a client sees in
// OpenAI's shape. No Node built-ins here: the types are what an episode (agentEnv.ts) reads.

/** A function tool the request declares (tools[i].function). */
export interface ChatToolDef {
  readonly name: string;
  readonly description?: string;
  /** A JSON Schema object; `{type: "object", properties: {}}` when the request gave none. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ChatToolCall {
  readonly id: string;
  readonly name: string;
  /** JSON text, as OpenAI sends it (not parsed here: a model may write invalid JSON). */
  readonly arguments: string;
}

export interface ChatRequestMessage {
  readonly role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** Text parts joined with "\n"; '' for an assistant message that only calls tools. */
  readonly content: string;
  readonly toolCalls?: readonly ChatToolCall[];
  readonly toolCallId?: string;
  readonly name?: string;
}

export interface ChatRequest {
  /** The model the program named (any name is served by the policy). */
  readonly model: string;
  readonly messages: readonly ChatRequestMessage[];
  readonly tools: readonly ChatToolDef[];
  /** "auto" when tools are declared and none was chosen, else "none". */
  readonly toolChoice: 'auto' | 'none' | 'required' | { readonly name: string };
  /** parallel_tool_calls (default true): whether one answer may call several tools. */
  readonly parallelToolCalls: boolean;
  readonly temperature?: number;
  readonly topP?: number;
  /** max_tokens or max_completion_tokens (the smaller when both are given). */
  readonly maxTokens?: number;
  readonly stop: readonly string[];
  readonly n: number;
  readonly logprobs: boolean;
  readonly topLogprobs: number;
  readonly stream: boolean;
  /** stream_options.include_usage, only when streaming. */
  readonly includeUsage: boolean;
  readonly seed?: number;
}

/** An error the client sees in OpenAI's shape: {"error": {message, type, param, code}} with this status. */
export class EndpointError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'EndpointError';
  }
}

export interface EndpointLimits {
  /** Request body bytes (default 8 MiB); a longer body is answered 413 and not read further. */
  readonly maxBodyBytes?: number;
  readonly maxMessages?: number;
  readonly maxTools?: number;
  /** The largest `n` (choices per request). */
  readonly maxN?: number;
}

export const DEFAULT_LIMITS: Required<EndpointLimits> = { maxBodyBytes: 8 * 1024 * 1024, maxMessages: 2048, maxTools: 128, maxN: 8 };

/** Text shown in an error, cut at `n` characters (a client's value may be long). */
export const clip = (s: string, n = 60): string => (s.length > n ? `${s.slice(0, n)}…` : s);

/** A 400 invalid_request_error naming the parameter (null: the body as a whole). */
export const invalid = (param: string | null, message: string, code: string | null = 'invalid_value'): EndpointError =>
  new EndpointError(400, message, 'invalid_request_error', param, code);

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const quoteList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');

/** What a client sent instead, as an error says it ("got an integer instead"). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return 'an object';
}
