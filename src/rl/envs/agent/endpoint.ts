// An OpenAI-compatible chat-completions endpoint on loopback, the wire between an agent program the user
// already has (a loop around an OpenAI client) and the policy being trained. The workbench starts the
// program once per episode with OPENAI_BASE_URL set to that episode's base URL and OPENAI_API_KEY to the
// run's key; each request is checked, parsed into a ChatRequest and answered by the caller's handler,
// which samples the policy. This file is only the HTTP layer: routes, the key, validation, and
// responses in OpenAI's shapes (JSON, server-sent events, errors); it holds no model code.
// Requests are checked as strictly as OpenAI checks them, with `param` naming the field, and what the
// policy cannot honour (JSON output modes, sampling penalties, the legacy `functions`) is refused
// rather than ignored: a program should fail loudly, not train on answers it did not ask for. A
// streamed answer is sent once the handler has the whole result, so the handler's errors (a prompt over
// the context, say) keep their HTTP status.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

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

export interface EndpointOptions {
  /** What /models lists and responses name. */
  readonly modelName: string;
  /**
   * Answers one request of an open episode. May throw an EndpointError (e.g. 400
   * context_length_exceeded), which the client gets as is; any other error is a 500 server_error
   * carrying the error's message (never its stack). The signal aborts when the client disconnects, the
   * episode closes or the endpoint stops.
   */
  readonly complete: (episode: string, request: ChatRequest, signal: AbortSignal) => Promise<ChatResult>;
  /** The bearer key clients must send; default a fresh random one ("sk-agentrl-" and 32 random bytes). */
  readonly key?: string;
  readonly limits?: EndpointLimits;
}

const DEFAULT_LIMITS: Required<EndpointLimits> = { maxBodyBytes: 8 * 1024 * 1024, maxMessages: 2048, maxTools: 128, maxN: 8 };
const HOST = '127.0.0.1';
const OWNER = 'agent-rl-workbench';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Absent and null are the same for an optional field (OpenAI's parameters are nullable). */
const given = (v: unknown): boolean => v !== undefined && v !== null;
const clip = (s: string, n = 60): string => (s.length > n ? `${s.slice(0, n)}…` : s);
const quoteList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return 'an object';
}

const invalid = (param: string | null, message: string, code: string | null = 'invalid_value'): EndpointError =>
  new EndpointError(400, message, 'invalid_request_error', param, code);
const wrongType = (param: string, expected: string, v: unknown): EndpointError =>
  invalid(param, `Invalid type for '${param}': expected ${expected}, but got ${kindOf(v)} instead.`, 'invalid_type');
const missing = (param: string): EndpointError => invalid(param, `Missing required parameter: '${param}'.`, 'missing_required_parameter');
const unsupported = (param: string, message: string): EndpointError => invalid(param, message, 'unsupported_parameter');

function optString(v: unknown, param: string): string | undefined {
  if (!given(v)) return undefined;
  if (typeof v !== 'string') throw wrongType(param, 'a string', v);
  return v;
}

function reqString(v: unknown, param: string): string {
  if (!given(v)) throw missing(param);
  if (typeof v !== 'string') throw wrongType(param, 'a string', v);
  return v;
}

function optBoolean(v: unknown, param: string): boolean | undefined {
  if (!given(v)) return undefined;
  if (typeof v !== 'boolean') throw wrongType(param, 'a boolean', v);
  return v;
}

interface Range {
  readonly integer?: boolean;
  readonly min?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  readonly max?: number;
}

function optNumber(v: unknown, param: string, r: Range): number | undefined {
  if (!given(v)) return undefined;
  const kind = r.integer ? 'integer' : 'decimal';
  if (typeof v !== 'number' || !Number.isFinite(v) || (r.integer && !Number.isSafeInteger(v))) throw wrongType(param, r.integer ? 'an integer' : 'a number', v);
  const out = (side: 'below' | 'above', bound: string): EndpointError =>
    invalid(
      param,
      `Invalid '${param}': ${kind} ${side} ${side === 'below' ? 'minimum' : 'maximum'} value. Expected a value ${bound}, but got ${v} instead.`,
      `${kind}_${side}_${side === 'below' ? 'min' : 'max'}_value`,
    );
  if (r.min !== undefined && v < r.min) throw out('below', `>= ${r.min}`);
  if (r.above !== undefined && v <= r.above) throw out('below', `> ${r.above}`);
  if (r.max !== undefined && v > r.max) throw out('above', `<= ${r.max}`);
  return v;
}

function tooLong(param: string, max: number, got: number): EndpointError {
  return invalid(
    param,
    `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${got} instead.`,
    'array_above_max_length',
  );
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
type Role = (typeof ROLES)[number];
const isRole = (s: string): s is Role => (ROLES as readonly string[]).includes(s);

/** A message's content: a string, or text parts (joined with "\n", as vLLM joins them). */
function parseContent(v: unknown, param: string, mayBeNull: boolean): string {
  if (!given(v)) {
    if (mayBeNull) return '';
    throw missing(param);
  }
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) throw wrongType(param, 'one of a string or array of objects', v);
  return v
    .map((part, j) => {
      const p = `${param}[${j}]`;
      if (!isObject(part)) throw wrongType(p, 'an object', part);
      const type = reqString(part.type, `${p}.type`);
      if (type !== 'text') {
        throw invalid(
          `${p}.type`,
          `Content parts of type '${clip(type)}' are not supported: this endpoint serves a text-only policy. Send text parts ({"type": "text", "text": ...}) or a string.`,
          'unsupported_value',
        );
      }
      return reqString(part.text, `${p}.text`);
    })
    .join('\n');
}

function parseToolCalls(v: unknown, param: string): ChatToolCall[] {
  if (!Array.isArray(v)) throw wrongType(param, 'an array', v);
  return v.map((c, k) => {
    const p = `${param}[${k}]`;
    if (!isObject(c)) throw wrongType(p, 'an object', c);
    const type = reqString(c.type, `${p}.type`);
    if (type !== 'function') throw invalid(`${p}.type`, `Invalid value: '${clip(type)}'. Supported values are: 'function'.`);
    if (!given(c.function)) throw missing(`${p}.function`);
    if (!isObject(c.function)) throw wrongType(`${p}.function`, 'an object', c.function);
    return {
      id: reqString(c.id, `${p}.id`),
      name: reqString(c.function.name, `${p}.function.name`),
      arguments: reqString(c.function.arguments, `${p}.function.arguments`),
    };
  });
}

function parseMessage(m: unknown, i: number): ChatRequestMessage {
  const p = `messages[${i}]`;
  if (!isObject(m)) throw wrongType(p, 'an object', m);
  const role = reqString(m.role, `${p}.role`);
  if (!isRole(role)) throw invalid(`${p}.role`, `Invalid value: '${clip(role)}'. Supported values are: ${quoteList(ROLES)}.`);
  const name = optString(m.name, `${p}.name`);
  const toolCalls = role === 'assistant' && given(m.tool_calls) ? parseToolCalls(m.tool_calls, `${p}.tool_calls`) : undefined;
  if (role === 'assistant' && given(m.function_call)) throw unsupported(`${p}.function_call`, `'function_call' is not supported: send 'tool_calls'.`);
  const content = parseContent(m.content, `${p}.content`, toolCalls !== undefined && toolCalls.length > 0);
  const toolCallId = role === 'tool' ? reqString(m.tool_call_id, `${p}.tool_call_id`) : undefined;
  return {
    role,
    content,
    ...(toolCalls !== undefined ? { toolCalls } : {}),
    ...(toolCallId !== undefined ? { toolCallId } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

const SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
/** Below this depth a schema is not checked further (its shape is the model's business, not the wire's). */
const SCHEMA_DEPTH = 32;
const member = (param: string, key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? `${param}.${key}` : `${param}[${JSON.stringify(key)}]`);
const badSchema = (param: string, message: string): EndpointError => invalid(param, `Invalid schema at '${param}': ${message}`, 'invalid_function_parameters');

/**
 * Whether a value is a plausible JSON Schema: an object (or, below the top, true/false) whose `type`
 * names JSON Schema types, whose `properties` hold schemas and whose `required` lists names; nested
 * schemas (properties, items, anyOf/oneOf/allOf, $defs) are checked the same way.
 */
function checkSchema(s: unknown, param: string, depth: number): void {
  if (depth > 0 && typeof s === 'boolean') return;
  if (!isObject(s)) throw badSchema(param, `expected a JSON Schema object, but got ${kindOf(s)} instead.`);
  if (depth >= SCHEMA_DEPTH) return;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type];
    const bad = types.length === 0 ? s.type : types.find((t) => typeof t !== 'string' || !SCHEMA_TYPES.includes(t));
    if (bad !== undefined) {
      const shown = typeof bad === 'string' ? `'${clip(bad)}'` : kindOf(bad);
      throw badSchema(member(param, 'type'), `${shown} is not a JSON Schema type (one of ${quoteList(SCHEMA_TYPES)}, or an array of them).`);
    }
    if (depth === 0 && !types.includes('object')) throw badSchema(member(param, 'type'), `a function's parameters must be a schema of type 'object'.`);
  }
  if (s.properties !== undefined) {
    const props = member(param, 'properties');
    if (!isObject(s.properties)) throw badSchema(props, `expected an object of schemas, but got ${kindOf(s.properties)} instead.`);
    for (const [k, sub] of Object.entries(s.properties)) checkSchema(sub, member(props, k), depth + 1);
  }
  if (s.required !== undefined && (!Array.isArray(s.required) || !s.required.every((r) => typeof r === 'string'))) {
    throw badSchema(member(param, 'required'), 'expected an array of property names (strings).');
  }
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) s.items.forEach((sub, j) => checkSchema(sub, `${member(param, 'items')}[${j}]`, depth + 1));
    else checkSchema(s.items, member(param, 'items'), depth + 1);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw badSchema(member(param, key), `expected an array of schemas, but got ${kindOf(list)} instead.`);
    list.forEach((sub, j) => checkSchema(sub, `${member(param, key)}[${j}]`, depth + 1));
  }
  for (const key of ['$defs', 'definitions']) {
    const defs = s[key];
    if (defs === undefined) continue;
    if (!isObject(defs)) throw badSchema(member(param, key), `expected an object of schemas, but got ${kindOf(defs)} instead.`);
    for (const [k, sub] of Object.entries(defs)) checkSchema(sub, member(member(param, key), k), depth + 1);
  }
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function parseTools(v: unknown, maxTools: number): ChatToolDef[] {
  if (!given(v)) return [];
  if (!Array.isArray(v)) throw wrongType('tools', 'an array', v);
  if (v.length > maxTools) throw tooLong('tools', maxTools, v.length);
  const seen = new Set<string>();
  return v.map((t, i) => {
    const p = `tools[${i}]`;
    if (!isObject(t)) throw wrongType(p, 'an object', t);
    const type = reqString(t.type, `${p}.type`);
    if (type !== 'function') throw invalid(`${p}.type`, `Invalid value: '${clip(type)}'. Supported values are: 'function'.`);
    const f = t.function;
    if (!given(f)) throw missing(`${p}.function`);
    if (!isObject(f)) throw wrongType(`${p}.function`, 'an object', f);
    const name = reqString(f.name, `${p}.function.name`);
    if (!TOOL_NAME.test(name)) {
      throw invalid(
        `${p}.function.name`,
        `Invalid '${p}.function.name': string does not match pattern. Expected a string that matches the pattern '${TOOL_NAME.source}'.`,
      );
    }
    if (seen.has(name)) throw invalid(`${p}.function.name`, `Invalid '${p}.function.name': a tool named '${name}' is already declared.`);
    seen.add(name);
    const description = optString(f.description, `${p}.function.description`);
    let parameters: Json = { type: 'object', properties: {} };
    if (given(f.parameters)) {
      checkSchema(f.parameters, `${p}.function.parameters`, 0);
      parameters = f.parameters as Json;
    }
    return { name, ...(description !== undefined ? { description } : {}), parameters };
  });
}

function parseToolChoice(v: unknown, tools: readonly ChatToolDef[]): ChatRequest['toolChoice'] {
  if (!given(v)) return tools.length > 0 ? 'auto' : 'none';
  if (typeof v === 'string') {
    if (v !== 'auto' && v !== 'none' && v !== 'required')
      throw invalid('tool_choice', `Invalid value: '${clip(v)}'. Supported values are: 'none', 'auto', and 'required'.`);
    if (v === 'required' && tools.length === 0)
      throw invalid('tool_choice', `Invalid value for 'tool_choice': 'required' is only allowed when 'tools' are specified.`);
    return v;
  }
  if (!isObject(v)) throw wrongType('tool_choice', 'one of a string or an object', v);
  const type = reqString(v.type, 'tool_choice.type');
  if (type !== 'function') throw invalid('tool_choice.type', `Invalid value: '${clip(type)}'. Supported values are: 'function'.`);
  if (!given(v.function)) throw missing('tool_choice.function');
  if (!isObject(v.function)) throw wrongType('tool_choice.function', 'an object', v.function);
  const name = reqString(v.function.name, 'tool_choice.function.name');
  if (!tools.some((t) => t.name === name))
    throw invalid('tool_choice.function.name', `Invalid value: '${clip(name)}'. No tool of that name is declared in 'tools'.`);
  return { name };
}

function parseStop(v: unknown): string[] {
  if (!given(v)) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list)) throw wrongType('stop', 'one of a string or array of strings', v);
  if (list.length > 4) throw tooLong('stop', 4, list.length);
  return list.map((s, i) => {
    const p = typeof v === 'string' ? 'stop' : `stop[${i}]`;
    if (typeof s !== 'string') throw wrongType(p, 'a string', s);
    if (s === '') throw invalid(p, `Invalid '${p}': empty string. Expected a non-empty stop sequence.`);
    return s;
  });
}

/** What the policy cannot honour: refused with a 400 naming the parameter, never silently dropped. */
function refuseUnsupported(body: Json): void {
  const rf = body.response_format;
  if (given(rf)) {
    if (!isObject(rf)) throw wrongType('response_format', 'an object', rf);
    const type = reqString(rf.type, 'response_format.type');
    if (type === 'json_object' || type === 'json_schema') {
      throw invalid(
        'response_format',
        `'response_format' of type '${type}' is not supported by this endpoint: the policy samples free text, unconstrained. Ask for JSON in the prompt and parse the answer.`,
        'unsupported_value',
      );
    }
    if (type !== 'text') throw invalid('response_format.type', `Invalid value: '${clip(type)}'. Supported values are: 'text'.`);
  }
  for (const legacy of ['functions', 'function_call']) {
    if (given(body[legacy])) throw unsupported(legacy, `'${legacy}' (the legacy function calling) is not supported: declare 'tools' instead.`);
  }
  for (const penalty of ['frequency_penalty', 'presence_penalty']) {
    if (given(body[penalty]) && body[penalty] !== 0) {
      throw unsupported(penalty, `'${penalty}' is not supported: the policy's own distribution is sampled (leave it out or send 0).`);
    }
  }
  if (given(body.logit_bias) && !(isObject(body.logit_bias) && Object.keys(body.logit_bias).length === 0)) {
    throw unsupported('logit_bias', `'logit_bias' is not supported: the policy's own distribution is sampled.`);
  }
}

/** Checks a chat-completions body and reads it into a ChatRequest; throws a 400 EndpointError naming the field. */
export function parseChatRequest(body: unknown, limits: EndpointLimits = {}): ChatRequest {
  const l = { ...DEFAULT_LIMITS, ...limits };
  if (!isObject(body)) throw invalid(null, `The request body must be a JSON object, but got ${kindOf(body)}.`, 'invalid_type');
  const model = reqString(body.model, 'model');
  const msgs = body.messages;
  if (!given(msgs)) throw missing('messages');
  if (!Array.isArray(msgs)) throw wrongType('messages', 'an array', msgs);
  if (msgs.length === 0)
    throw invalid('messages', `Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.`, 'empty_array');
  if (msgs.length > l.maxMessages) throw tooLong('messages', l.maxMessages, msgs.length);
  const messages = msgs.map(parseMessage);
  const tools = parseTools(body.tools, l.maxTools);
  const toolChoice = parseToolChoice(body.tool_choice, tools);
  const parallelToolCalls = optBoolean(body.parallel_tool_calls, 'parallel_tool_calls') ?? true;
  const temperature = optNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  const topP = optNumber(body.top_p, 'top_p', { above: 0, max: 1 });
  const caps = [
    optNumber(body.max_tokens, 'max_tokens', { integer: true, min: 1 }),
    optNumber(body.max_completion_tokens, 'max_completion_tokens', { integer: true, min: 1 }),
  ];
  const maxTokens = caps.reduce<number | undefined>((a, b) => (a === undefined ? b : b === undefined ? a : Math.min(a, b)), undefined);
  const stop = parseStop(body.stop);
  const n = optNumber(body.n, 'n', { integer: true, min: 1, max: l.maxN }) ?? 1;
  const logprobs = optBoolean(body.logprobs, 'logprobs') ?? false;
  const topLogprobs = optNumber(body.top_logprobs, 'top_logprobs', { integer: true, min: 0, max: 20 }) ?? 0;
  if (topLogprobs > 0 && !logprobs) throw invalid('top_logprobs', `Invalid 'top_logprobs': 'logprobs' must be true when 'top_logprobs' is given.`);
  const stream = optBoolean(body.stream, 'stream') ?? false;
  let includeUsage = false;
  if (given(body.stream_options)) {
    if (!isObject(body.stream_options)) throw wrongType('stream_options', 'an object', body.stream_options);
    includeUsage = stream && (optBoolean(body.stream_options.include_usage, 'stream_options.include_usage') ?? false);
  }
  const seed = optNumber(body.seed, 'seed', { integer: true });
  refuseUnsupported(body);
  return {
    model,
    messages,
    tools,
    toolChoice,
    parallelToolCalls,
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    stop,
    n,
    logprobs,
    topLogprobs,
    stream,
    includeUsage,
    ...(seed !== undefined ? { seed } : {}),
  };
}

const errorBody = (e: EndpointError): Json => ({ error: { message: e.message, type: e.type, param: e.param, code: e.code } });

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

interface Reply {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

function completionBody(reply: Reply, request: ChatRequest, result: ChatResult): Json {
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
function completionChunks(reply: Reply, request: ChatRequest, result: ChatResult): Json[] {
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

function send(res: http.ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The body, up to `max` bytes: a longer one (by its Content-Length, or as it arrives) is a 413 and the rest is not read. */
function readBody(req: http.IncomingMessage, max: number, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = (): EndpointError =>
    new EndpointError(413, `The request body is over ${max} bytes, the limit of this endpoint.`, 'invalid_request_error', null, 'request_too_large');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (e?: Error): void => {
      req.off('data', onData).off('end', onEnd).off('error', done);
      signal.removeEventListener('abort', onAbort);
      if (e !== undefined) reject(e);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > max) {
        req.pause();
        done(tooLarge());
      } else chunks.push(c);
    };
    const onEnd = (): void => done();
    const onAbort = (): void => done(signal.reason as Error);
    req.on('data', onData).on('end', onEnd).on('error', done);
    signal.addEventListener('abort', onAbort);
  });
}

function bearer(req: http.IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

const digest = (s: string): Buffer => crypto.createHash('sha256').update(s, 'utf8').digest();

export class AgentEndpoint {
  readonly key: string;
  private readonly server: http.Server;
  private readonly limits: Required<EndpointLimits>;
  /** Open episodes and the aborts of their requests in flight. */
  private readonly episodes = new Map<string, Set<AbortController>>();
  private readonly keyDigest: Buffer;
  private readonly started = Math.floor(Date.now() / 1000);
  private boundPort = 0;
  private stopped?: Promise<void>;

  private constructor(private readonly o: EndpointOptions) {
    this.key = o.key ?? `sk-agentrl-${crypto.randomBytes(32).toString('base64url')}`;
    if (this.key.length === 0 || /\s/.test(this.key)) throw new Error('AgentEndpoint: the key must be non-empty text without spaces');
    this.keyDigest = digest(this.key);
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => this.fail(res, e));
    });
  }

  /** Listens on 127.0.0.1 (only), on a free port. */
  static async start(o: EndpointOptions): Promise<AgentEndpoint> {
    const endpoint = new AgentEndpoint(o);
    await new Promise<void>((resolve, reject) => {
      endpoint.server.once('error', reject);
      endpoint.server.listen(0, HOST, () => {
        endpoint.server.off('error', reject);
        resolve();
      });
    });
    endpoint.boundPort = (endpoint.server.address() as AddressInfo).port;
    return endpoint;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The OPENAI_BASE_URL of one episode's program. */
  baseUrl(episode: string): string {
    return `http://${HOST}:${this.port}/episodes/${encodeURIComponent(episode)}/v1`;
  }

  /** Lets the episode's requests in (opening an open episode changes nothing). */
  open(episode: string): void {
    if (!this.episodes.has(episode)) this.episodes.set(episode, new Set());
  }

  /** Refuses the episode's further requests (404 episode_not_open) and aborts those in flight. */
  close(episode: string): void {
    const inFlight = this.episodes.get(episode);
    if (inFlight === undefined) return;
    this.episodes.delete(episode);
    const reason = new EndpointError(404, `Episode '${episode}' was closed while this request ran.`, 'invalid_request_error', null, 'episode_not_open');
    for (const c of inFlight) c.abort(reason);
  }

  /** Aborts every request in flight, closes the server and every connection. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      const reason = new EndpointError(503, 'The endpoint stopped.', 'server_error', null, 'endpoint_stopped');
      for (const inFlight of this.episodes.values()) for (const c of inFlight) c.abort(reason);
      this.episodes.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.stopped;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sent = bearer(req);
    // Both digests are 32 bytes, so the comparison takes the same time whatever was sent.
    if (!crypto.timingSafeEqual(digest(sent ?? ''), this.keyDigest) || sent === undefined) {
      const message =
        sent === undefined
          ? "You didn't provide an API key. Send it in the Authorization header (Authorization: Bearer <key>): the key is in OPENAI_API_KEY."
          : 'Incorrect API key provided. Use the key in OPENAI_API_KEY.';
      // Connection: close: an unauthenticated body is never read.
      return send(res, 401, errorBody(new EndpointError(401, message, 'invalid_request_error', null, 'invalid_api_key')), {
        'www-authenticate': 'Bearer',
        connection: 'close',
      });
    }
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', `http://${HOST}`).pathname;
    const m = /^\/episodes\/([^/]+)\/v1(\/.*)?$/.exec(path);
    const route = m === null ? undefined : this.routeOf(m[2] ?? '');
    let episode: string | undefined;
    try {
      episode = m === null ? undefined : decodeURIComponent(m[1]!);
    } catch {
      episode = undefined;
    }
    if (route === undefined || episode === undefined) {
      throw new EndpointError(
        404,
        `Unknown request URL: ${method} ${clip(path, 200)}. This endpoint serves GET /models, GET /models/<id> and POST /chat/completions under each episode's base URL (OPENAI_BASE_URL).`,
        'invalid_request_error',
        null,
        'unknown_url',
      );
    }
    if (method !== route.method) {
      return send(
        res,
        405,
        errorBody(
          new EndpointError(
            405,
            `Method ${method} is not allowed on ${clip(path, 200)}; use ${route.method}.`,
            'invalid_request_error',
            null,
            'method_not_allowed',
          ),
        ),
        { allow: route.method },
      );
    }
    const inFlight = this.episodes.get(episode);
    if (inFlight === undefined) {
      throw new EndpointError(
        404,
        `Episode '${clip(episode)}' is not open: its program runs only while the episode does.`,
        'invalid_request_error',
        null,
        'episode_not_open',
      );
    }
    const model = { id: this.o.modelName, object: 'model', created: this.started, owned_by: OWNER };
    if (route.kind === 'models') return send(res, 200, { object: 'list', data: [model] });
    if (route.kind === 'model') {
      if (route.id !== this.o.modelName) {
        throw new EndpointError(
          404,
          `The model '${clip(route.id)}' does not exist; this endpoint serves '${this.o.modelName}'.`,
          'invalid_request_error',
          'model',
          'model_not_found',
        );
      }
      return send(res, 200, model);
    }
    const controller = new AbortController();
    inFlight.add(controller);
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('the client disconnected'));
    });
    try {
      await this.chat(episode, req, res, controller.signal);
    } catch (e) {
      this.fail(res, e, controller.signal);
    } finally {
      inFlight.delete(controller);
    }
  }

  private routeOf(rest: string): { kind: 'models' | 'chat'; method: string } | { kind: 'model'; method: string; id: string } | undefined {
    if (rest === '/models') return { kind: 'models', method: 'GET' };
    if (rest === '/chat/completions') return { kind: 'chat', method: 'POST' };
    if (rest.startsWith('/models/') && rest.length > '/models/'.length) {
      try {
        return { kind: 'model', method: 'GET', id: decodeURIComponent(rest.slice('/models/'.length)) };
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  private async chat(episode: string, req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    const raw = await readBody(req, this.limits.maxBodyBytes, signal);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      throw invalid(null, `We could not parse the JSON body of your request (${(e as Error).message}). The endpoint expects a JSON object.`, 'invalid_json');
    }
    const request = parseChatRequest(body, this.limits);
    signal.throwIfAborted();
    const result = await this.o.complete(episode, request, signal);
    signal.throwIfAborted();
    if (result.choices.length !== request.n) throw new Error(`the handler returned ${result.choices.length} choices for n = ${request.n}`);
    const reply: Reply = { id: `chatcmpl-${crypto.randomBytes(12).toString('hex')}`, created: Math.floor(Date.now() / 1000), model: this.o.modelName };
    if (!request.stream) return send(res, 200, completionBody(reply, request, result));
    const events = completionChunks(reply, request, result).map((c) => `data: ${JSON.stringify(c)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const e of events) res.write(e);
    res.end('data: [DONE]\n\n');
  }

  /**
   * Answers an error in OpenAI's shape: an EndpointError as is (or the abort's reason when the episode
   * closed or the endpoint stopped), anything else as a 500 with the message only. Once a stream's
   * headers are out, the error goes as one last event.
   */
  private fail(res: http.ServerResponse, e: unknown, signal?: AbortSignal): void {
    let err: EndpointError;
    if (signal?.aborted && signal.reason instanceof EndpointError) err = signal.reason;
    else if (e instanceof EndpointError) err = e;
    else {
      const text = e instanceof Error ? e.message : String(e);
      err = new EndpointError(500, `The model's handler failed: ${clip(text, 2000)}`, 'server_error', null, null);
    }
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) {
      res.end(`data: ${JSON.stringify(errorBody(err))}\n\n`);
      return;
    }
    const headers: Record<string, string> = {};
    // The SDKs retry 5xx by default: a retry would sample again, a second turn the episode did not take.
    if (err.status >= 500) headers['x-should-retry'] = 'false';
    if (err.status === 413) headers.connection = 'close';
    send(res, err.status, errorBody(err), headers);
  }
}
