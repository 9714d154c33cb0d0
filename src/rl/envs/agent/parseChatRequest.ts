// Checks a chat-completions body as strictly as OpenAI checks it, with `param` naming the field, and
// reads it into a ChatRequest (chatRequest.ts). What the policy cannot honour (JSON output modes,
// sampling penalties, the legacy `functions`) is refused rather than ignored: a program should fail
// loudly, not train on answers it did not ask for.
import { checkSchema } from './checkSchema';
import {
  clip,
  DEFAULT_LIMITS,
  isObject,
  kindOf,
  quoteList,
  type Json,
  EndpointError,
  invalid,
  type ChatRequest,
  type ChatRequestMessage,
  type ChatToolCall,
  type ChatToolDef,
  type EndpointLimits,
} from './chatRequest';

/** Absent and null are the same for an optional field (OpenAI's parameters are nullable). */
const given = (v: unknown): boolean => v !== undefined && v !== null;

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
