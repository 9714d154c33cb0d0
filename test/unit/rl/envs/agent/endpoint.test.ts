// The OpenAI-compatible endpoint an agent program talks to, driven by the official `openai` client (a
// tool round trip, the same streamed, the model list, logprobs) and by raw fetch for the wire's edges:
// the key, episodes that are not open, every kind of bad request with the field it names, the body
// limit, handler failures, aborts, the loopback binding and a clean stop. The handler here is a small
// deterministic stand-in for the policy.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { AgentEndpoint, EndpointError, type ChatChoice, type ChatRequest, type ChatResult } from '../../../../../src/rl/envs/agent/endpoint';

const MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';

interface Call {
  readonly episode: string;
  readonly request: ChatRequest;
  readonly signal: AbortSignal;
}
const calls: Call[] = [];

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
} as const;

/**
 * The stand-in policy: a user turn with get_weather declared calls it; a tool result is read back as
 * text; other texts are echoed, with one "token" per word when logprobs are asked for. The texts
 * "hang", "fail" and "too long" wait for the abort, throw a plain Error, throw a context-length error.
 */
async function complete(episode: string, request: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
  calls.push({ episode, request, signal });
  const last = request.messages.at(-1)!;
  if (last.content === 'hang') return new Promise<ChatResult>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
  if (last.content === 'fail') throw new Error('the model crashed');
  if (last.content === 'too long') {
    throw new EndpointError(400, "This model's maximum context length is 32 tokens.", 'invalid_request_error', 'messages', 'context_length_exceeded');
  }
  const callsTool = last.role === 'user' && request.toolChoice !== 'none' && request.tools.some((t) => t.name === 'get_weather');
  const text = last.role === 'tool' ? `It is ${last.content} in Paris.` : `You said: ${last.content}`;
  const choice = (i: number): ChatChoice =>
    callsTool
      ? { content: null, toolCalls: [{ id: `call_${i}`, name: 'get_weather', arguments: '{"city":"Paris"}' }], finishReason: 'tool_calls' }
      : {
          content: text,
          toolCalls: [],
          finishReason: 'stop',
          ...(request.logprobs
            ? {
                logprobs: text.split(/(?= )/).map((token, k) => ({
                  token,
                  logprob: -0.25 * (k + 1),
                  top:
                    request.topLogprobs > 0
                      ? [
                          { token, logprob: -0.25 * (k + 1) },
                          { token: '!', logprob: -9 },
                        ]
                      : [],
                })),
              }
            : {}),
        };
  return { choices: Array.from({ length: request.n }, (_, i) => choice(i)), promptTokens: 7 * request.messages.length, completionTokens: 5 };
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface ErrorJson {
  readonly error: { readonly message: string; readonly type: string; readonly param: string | null; readonly code: string | null };
}

async function post(
  ep: AgentEndpoint,
  episode: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; res: Response }> {
  const res = await fetch(`${ep.baseUrl(episode)}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ep.key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json(), res };
}

/** The exact OpenAI error shape: error.{message, type, param, code} and nothing else. */
function assertError(json: unknown, want: { type: string; param: string | null; code: string | null }, message?: RegExp): string {
  const e = (json as ErrorJson).error;
  assert.deepEqual(Object.keys(json as object), ['error']);
  assert.deepEqual(Object.keys(e), ['message', 'type', 'param', 'code']);
  assert.deepEqual({ type: e.type, param: e.param, code: e.code }, want, e.message);
  assert.ok(typeof e.message === 'string' && e.message.length > 0);
  if (message) assert.match(e.message, message);
  return e.message;
}

/** The status of a POST that declares a gigabyte body and sends ten bytes of it: answered without reading the rest. */
function unfinishedPost(ep: AgentEndpoint, episode: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${ep.baseUrl(episode)}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(1e9) },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.write('{"model": "');
  });
}

const user = (content: string): { role: 'user'; content: string } => ({ role: 'user', content });
const chat = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ model: 'gpt-4o-mini', messages: [user('hi')], ...extra });

describe('agent endpoint', () => {
  let ep: AgentEndpoint;
  let client: OpenAI;
  before(async () => {
    ep = await AgentEndpoint.start({ modelName: MODEL, complete });
    ep.open('ep1');
    client = new OpenAI({ baseURL: ep.baseUrl('ep1'), apiKey: ep.key, maxRetries: 0 });
  });
  after(() => ep.stop());

  it('makes a fresh sk-agentrl- key (32 random bytes) and an episode base URL on 127.0.0.1', () => {
    assert.match(ep.key, /^sk-agentrl-[A-Za-z0-9_-]{43}$/);
    assert.equal(ep.baseUrl('ep1'), `http://127.0.0.1:${ep.port}/episodes/ep1/v1`);
    assert.ok(ep.port > 0);
  });

  it('openai client: a tool call, then the tool result back and a final answer; the handler gets the parsed request', async () => {
    calls.length = 0;
    const first = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in' },
            { type: 'text', text: 'Paris?' },
          ],
        },
      ],
      tools: [WEATHER_TOOL],
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 64,
      max_completion_tokens: 32,
      stop: 'END',
      seed: 3,
      user: 'someone',
      parallel_tool_calls: false,
      metadata: { run: 'x' },
      store: false,
      response_format: { type: 'text' },
    });
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.episode, 'ep1');
    assert.deepEqual(calls[0]!.request, {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in\nParis?' },
      ],
      tools: [{ name: 'get_weather', description: 'The weather of a city', parameters: WEATHER_TOOL.function.parameters }],
      toolChoice: 'auto',
      parallelToolCalls: false,
      temperature: 0.7,
      topP: 0.9,
      maxTokens: 32,
      stop: ['END'],
      n: 1,
      logprobs: false,
      topLogprobs: 0,
      stream: false,
      includeUsage: false,
      seed: 3,
    });
    assert.match(first.id, /^chatcmpl-/);
    assert.equal(first.object, 'chat.completion');
    assert.equal(first.model, MODEL);
    assert.ok(Math.abs(first.created - Date.now() / 1000) < 60);
    const c0 = first.choices[0]!;
    assert.equal(c0.index, 0);
    assert.equal(c0.finish_reason, 'tool_calls');
    assert.equal(c0.logprobs, null);
    assert.deepEqual(c0.message, {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
    assert.deepEqual(first.usage, { prompt_tokens: 14, completion_tokens: 5, total_tokens: 19 });

    const second = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }, c0.message, { role: 'tool', tool_call_id: 'call_0', content: '18°C' }],
      tools: [WEATHER_TOOL],
    });
    assert.deepEqual(calls[1]!.request.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', content: '18°C', toolCallId: 'call_0' },
    ]);
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(second.choices[0]!.message, { role: 'assistant', content: 'It is 18°C in Paris.', refusal: null });
  });

  it('openai client, streamed with include_usage: role, tool call from its deltas, finish, usage chunk; then a streamed text answer', async () => {
    calls.length = 0;
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [user('Weather in Paris?')],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls0: { id: string; name: string; arguments: string }[] = [];
    let role: string | undefined;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, MODEL);
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        role ??= c.delta.role;
        for (const d of c.delta.tool_calls ?? []) {
          const t = (calls0[d.index] ??= { id: '', name: '', arguments: '' });
          t.id += d.id ?? '';
          t.name += d.function?.name ?? '';
          t.arguments += d.function?.arguments ?? '';
        }
        finish = c.finish_reason ?? finish;
      }
    }
    assert.equal(calls[0]!.request.stream, true);
    assert.equal(calls[0]!.request.includeUsage, true);
    assert.deepEqual(calls[0]!.request.toolChoice, { name: 'get_weather' });
    assert.equal(role, 'assistant');
    assert.deepEqual(calls0, [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(usage, { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
    assert.equal(chunks, 5, 'role, tool call head, its arguments, finish, usage');

    // The SDK's own assembler (chat.completions.stream) reads the same chunks into a whole completion.
    const runner = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [
        user('Weather?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'rain' },
      ],
      tools: [WEATHER_TOOL],
      stream_options: { include_usage: true },
    });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0]!.message.content, 'It is rain in Paris.');
    assert.equal(final.choices[0]!.finish_reason, 'stop');
    assert.equal(final.usage?.total_tokens, 26);
  });

  it('openai client: models.list and models.retrieve (a name with a slash); another name is 404', async () => {
    const listed = [];
    for await (const m of client.models.list()) listed.push(m);
    assert.equal(listed.length, 1);
    assert.deepEqual({ ...listed[0]!, created: 0 }, { id: MODEL, object: 'model', created: 0, owned_by: 'agent-rl-workbench' });
    assert.equal((await client.models.retrieve(MODEL)).id, MODEL);
    await assert.rejects(client.models.retrieve('gpt-4o'), (e: unknown) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
    const raw = await fetch(`${ep.baseUrl('ep1')}/models`, { headers: { authorization: `Bearer ${ep.key}` } });
    assert.deepEqual(Object.keys((await raw.json()) as object), ['object', 'data']);
  });

  it('openai client: logprobs with top_logprobs, n = 2, streamed and not', async () => {
    const r = await client.chat.completions.create({ model: 'm', messages: [user('a b')], logprobs: true, top_logprobs: 2, n: 2 });
    assert.equal(r.choices.length, 2);
    assert.deepEqual(
      r.choices.map((c) => c.index),
      [0, 1],
    );
    const lp = r.choices[1]!.logprobs!;
    assert.deepEqual(lp.content, [
      {
        token: 'You',
        logprob: -0.25,
        bytes: [89, 111, 117],
        top_logprobs: [
          { token: 'You', logprob: -0.25, bytes: [89, 111, 117] },
          { token: '!', logprob: -9, bytes: [33] },
        ],
      },
      {
        token: ' said:',
        logprob: -0.5,
        bytes: [...Buffer.from(' said:')],
        top_logprobs: [
          { token: ' said:', logprob: -0.5, bytes: [...Buffer.from(' said:')] },
          { token: '!', logprob: -9, bytes: [33] },
        ],
      },
      {
        token: ' a',
        logprob: -0.75,
        bytes: [32, 97],
        top_logprobs: [
          { token: ' a', logprob: -0.75, bytes: [32, 97] },
          { token: '!', logprob: -9, bytes: [33] },
        ],
      },
      {
        token: ' b',
        logprob: -1,
        bytes: [32, 98],
        top_logprobs: [
          { token: ' b', logprob: -1, bytes: [32, 98] },
          { token: '!', logprob: -9, bytes: [33] },
        ],
      },
    ]);
    assert.equal(lp.content.map((t) => t.token).join(''), r.choices[1]!.message.content);

    const s = await client.chat.completions.create({ model: 'm', messages: [user('é')], logprobs: true, stream: true });
    const tokens: string[] = [];
    let text = '';
    for await (const chunk of s) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        for (const t of c.logprobs?.content ?? []) tokens.push(t.token);
      }
    }
    assert.equal(text, 'You said: é');
    assert.equal(tokens.join(''), text);
  });

  it('openai client: a handler EndpointError keeps its status, code and param, streamed or not', async () => {
    for (const stream of [false, true]) {
      await assert.rejects(
        client.chat.completions.create({ model: 'm', messages: [user('too long')], stream }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.code === 'context_length_exceeded' && e.param === 'messages',
      );
    }
  });

  it('401 invalid_api_key for a wrong or missing key (before the body is read), without CORS headers', async () => {
    for (const headers of [{ authorization: 'Bearer sk-agentrl-wrong' }, { authorization: '' }, { authorization: `Basic ${ep.key}` }]) {
      const r = await post(ep, 'ep1', chat(), headers);
      assert.equal(r.status, 401);
      assertError(r.json, { type: 'invalid_request_error', param: null, code: 'invalid_api_key' });
      assert.ok(!assertError(r.json, { type: 'invalid_request_error', param: null, code: 'invalid_api_key' }).includes(ep.key));
    }
    const models = await fetch(`${ep.baseUrl('ep1')}/models`);
    assert.equal(models.status, 401);
    const ok = await post(ep, 'ep1', chat());
    assert.equal(ok.status, 200);
    for (const r of [models, ok.res])
      for (const h of ['access-control-allow-origin', 'access-control-allow-headers']) assert.equal(r.headers.get(h), null, 'no CORS headers');
    assert.equal(await unfinishedPost(ep, 'ep1', 'sk-wrong'), 401, 'the key is checked before the body is read');
    const wrongSdk = new OpenAI({ baseURL: ep.baseUrl('ep1'), apiKey: 'sk-nope', maxRetries: 0 });
    await assert.rejects(wrongSdk.models.list(), (e: unknown) => e instanceof OpenAI.AuthenticationError && e.code === 'invalid_api_key');
  });

  it('404 episode_not_open for a closed episode and a never-opened one; unknown URLs 404, wrong methods 405', async () => {
    ep.open('ep2');
    assert.equal((await post(ep, 'ep2', chat())).status, 200);
    ep.close('ep2');
    for (const episode of ['ep2', 'never']) {
      const r = await post(ep, episode, chat());
      assert.equal(r.status, 404);
      assertError(r.json, { type: 'invalid_request_error', param: null, code: 'episode_not_open' }, new RegExp(episode));
    }
    const auth = { authorization: `Bearer ${ep.key}` };
    const base = `http://127.0.0.1:${ep.port}`;
    for (const url of [
      `${base}/v1/chat/completions`,
      `${ep.baseUrl('ep1')}/completions`,
      `${ep.baseUrl('ep1')}/embeddings`,
      `${base}/episodes/ep1/v2/models`,
    ]) {
      const r = await fetch(url, { method: 'POST', headers: auth, body: '{}' });
      assert.equal(r.status, 404, url);
      assertError(await r.json(), { type: 'invalid_request_error', param: null, code: 'unknown_url' });
    }
    const get = await fetch(`${ep.baseUrl('ep1')}/chat/completions`, { headers: auth });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assertError(await get.json(), { type: 'invalid_request_error', param: null, code: 'method_not_allowed' });
    const del = await fetch(`${ep.baseUrl('ep1')}/models`, { method: 'DELETE', headers: auth });
    assert.equal(del.status, 405);
  });

  it('400 invalid_request_error naming the field, for malformed JSON, wrong types, unknown roles and bad values', async () => {
    const malformed = await post(ep, 'ep1', '{"model": "m", "messages": [');
    assert.equal(malformed.status, 400);
    assertError(malformed.json, { type: 'invalid_request_error', param: null, code: 'invalid_json' });

    const many = await post(ep, 'ep1', chat({ messages: Array.from({ length: 10_000 }, () => user('x')) }));
    assert.equal(many.status, 400);
    assertError(
      many.json,
      { type: 'invalid_request_error', param: 'messages', code: 'array_above_max_length' },
      /maximum length 2048, but got an array with length 10000/,
    );

    const tool = (fn: Record<string, unknown>): Record<string, unknown> => ({ type: 'function', function: { name: 'f', ...fn } });
    const cases: [Record<string, unknown>, string | null, string][] = [
      [{ messages: 'hi' }, 'messages', 'invalid_type'],
      [{ messages: [] }, 'messages', 'empty_array'],
      [{ model: undefined }, 'model', 'missing_required_parameter'],
      [{ messages: [user('a'), user('b'), user('c'), { role: 'robot', content: 'x' }] }, 'messages[3].role', 'invalid_value'],
      [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
      [{ messages: [{ role: 'user', content: 3 }] }, 'messages[0].content', 'invalid_type'],
      [{ messages: [{ role: 'user' }] }, 'messages[0].content', 'missing_required_parameter'],
      [{ messages: [{ role: 'assistant', content: null }] }, 'messages[0].content', 'missing_required_parameter'],
      [
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'look' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
              ],
            },
          ],
        },
        'messages[0].content[1].type',
        'unsupported_value',
      ],
      [{ messages: [{ role: 'tool', content: '1' }] }, 'messages[0].tool_call_id', 'missing_required_parameter'],
      [
        { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }] },
        'messages[0].tool_calls[0].function.arguments',
        'invalid_type',
      ],
      [{ tools: [tool({ parameters: [1, 2] })] }, 'tools[0].function.parameters', 'invalid_function_parameters'],
      [{ tools: [tool({ parameters: { type: 'objekt' } })] }, 'tools[0].function.parameters.type', 'invalid_function_parameters'],
      [{ tools: [tool({ parameters: { type: 'string' } })] }, 'tools[0].function.parameters.type', 'invalid_function_parameters'],
      [{ tools: [tool({ parameters: { type: 'object', properties: { x: 3 } } })] }, 'tools[0].function.parameters.properties.x', 'invalid_function_parameters'],
      [
        { tools: [tool({ parameters: { type: 'object', properties: { x: { type: 'array', items: { type: 'str' } } } } })] },
        'tools[0].function.parameters.properties.x.items.type',
        'invalid_function_parameters',
      ],
      [{ tools: [tool({ parameters: { type: 'object', required: 'x' } })] }, 'tools[0].function.parameters.required', 'invalid_function_parameters'],
      [{ tools: [tool({ name: 'bad name' })] }, 'tools[0].function.name', 'invalid_value'],
      [{ tools: [tool({}), tool({})] }, 'tools[1].function.name', 'invalid_value'],
      [{ tools: [{ type: 'custom', custom: { name: 'f' } }] }, 'tools[0].type', 'invalid_value'],
      [{ tools: [tool({})], tool_choice: { type: 'function', function: { name: 'g' } } }, 'tool_choice.function.name', 'invalid_value'],
      [{ tool_choice: 'required' }, 'tool_choice', 'invalid_value'],
      [{ tool_choice: 'sometimes' }, 'tool_choice', 'invalid_value'],
      [{ temperature: 2.5 }, 'temperature', 'decimal_above_max_value'],
      [{ temperature: '1' }, 'temperature', 'invalid_type'],
      [{ top_p: 0 }, 'top_p', 'decimal_below_min_value'],
      [{ max_tokens: 0 }, 'max_tokens', 'integer_below_min_value'],
      [{ max_completion_tokens: 1.5 }, 'max_completion_tokens', 'invalid_type'],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'array_above_max_length'],
      [{ stop: ['a', ''] }, 'stop[1]', 'invalid_value'],
      [{ n: 0 }, 'n', 'integer_below_min_value'],
      [{ n: 9 }, 'n', 'integer_above_max_value'],
      [{ logprobs: 'yes' }, 'logprobs', 'invalid_type'],
      [{ top_logprobs: 3 }, 'top_logprobs', 'invalid_value'],
      [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs', 'integer_above_max_value'],
      [{ stream: 1 }, 'stream', 'invalid_type'],
      [{ stream: true, stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage', 'invalid_type'],
      [{ seed: 1.5 }, 'seed', 'invalid_type'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format', 'unsupported_value'],
      [{ response_format: { type: 'json_object' } }, 'response_format', 'unsupported_value'],
      [{ functions: [{ name: 'f', parameters: {} }] }, 'functions', 'unsupported_parameter'],
      [{ presence_penalty: 0.5 }, 'presence_penalty', 'unsupported_parameter'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias', 'unsupported_parameter'],
    ];
    for (const [extra, param, code] of cases) {
      const r = await post(ep, 'ep1', chat(extra));
      assert.equal(r.status, 400, JSON.stringify(extra).slice(0, 200));
      assertError(r.json, { type: 'invalid_request_error', param, code });
    }
    const body = await post(ep, 'ep1', '[1]');
    assertError(body.json, { type: 'invalid_request_error', param: null, code: 'invalid_type' });
    const image = await post(ep, 'ep1', chat(cases[8]![0]));
    assert.match((image.json as ErrorJson).error.message, /image_url/);
  });

  it('accepts what frameworks send: nulls for optional fields, zero penalties, text parts, empty logit_bias, unknown fields', async () => {
    calls.length = 0;
    const r = await post(
      ep,
      'ep1',
      chat({
        temperature: null,
        tools: null,
        tool_choice: null,
        stop: null,
        frequency_penalty: 0,
        presence_penalty: 0,
        logit_bias: {},
        stream: false,
        stream_options: { include_usage: true },
        reasoning_effort: 'low',
        tools_extra: 1,
        messages: [
          { role: 'developer', content: 'rules' },
          { role: 'user', content: 'hi', name: 'ann' },
        ],
      }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(calls[0]!.request.messages, [
      { role: 'developer', content: 'rules' },
      { role: 'user', content: 'hi', name: 'ann' },
    ]);
    assert.equal(calls[0]!.request.includeUsage, false, 'include_usage only counts when streaming');
    assert.deepEqual(calls[0]!.request.tools, []);
    assert.equal(calls[0]!.request.toolChoice, 'none');
    calls.length = 0;
    await post(ep, 'ep1', chat({ tools: [{ type: 'function', function: { name: 'f' } }] }));
    assert.deepEqual(calls[0]!.request.tools, [{ name: 'f', parameters: { type: 'object', properties: {} } }]);
  });

  it('413 for a body over the limit, declared or chunked; the handler is never called', async () => {
    const small = await AgentEndpoint.start({ modelName: MODEL, complete, limits: { maxBodyBytes: 2048 }, key: 'sk-test-key' });
    try {
      small.open('e');
      assert.equal(small.key, 'sk-test-key');
      calls.length = 0;
      const big = chat({ messages: [user('x'.repeat(4000))] });
      const r = await post(small, 'e', big);
      assert.equal(r.status, 413);
      assertError(r.json, { type: 'invalid_request_error', param: null, code: 'request_too_large' }, /2048/);
      assert.equal(await unfinishedPost(small, 'e', small.key), 413, 'a declared length over the limit is refused before reading');
      const text = JSON.stringify(big);
      const chunked = await fetch(`${small.baseUrl('e')}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${small.key}`, 'content-type': 'application/json' },
        body: new ReadableStream({
          start(c) {
            for (let i = 0; i < text.length; i += 500) c.enqueue(new TextEncoder().encode(text.slice(i, i + 500)));
            c.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(chunked.status, 413);
      assertError(await chunked.json(), { type: 'invalid_request_error', param: null, code: 'request_too_large' });
      assert.equal(calls.length, 0);
      assert.equal((await post(small, 'e', chat())).status, 200, 'a body under the limit is served');
    } finally {
      await small.stop();
    }
  });

  it("500 server_error for a handler's plain Error: its message, no stack, and no retry asked of the SDK", async () => {
    const r = await post(ep, 'ep1', chat({ messages: [user('fail')] }));
    assert.equal(r.status, 500);
    assert.equal(r.res.headers.get('x-should-retry'), 'false');
    const message = assertError(r.json, { type: 'server_error', param: null, code: null }, /the model crashed/);
    assert.ok(!message.includes('\n') && !/ at .*\.js:\d+/.test(message), message);
    const withRetries = new OpenAI({ baseURL: ep.baseUrl('ep1'), apiKey: ep.key, maxRetries: 2 });
    calls.length = 0;
    await assert.rejects(
      withRetries.chat.completions.create({ model: 'm', messages: [user('fail')] }),
      (e: unknown) => e instanceof OpenAI.InternalServerError,
    );
    assert.equal(calls.length, 1, 'the SDK does not retry it');
  });

  it("closing an episode aborts its request in flight (answered 404 episode_not_open); a client's disconnect aborts too", async () => {
    ep.open('ep3');
    calls.length = 0;
    const pending = post(ep, 'ep3', chat({ messages: [user('hang')] }));
    await until('the handler', () => calls.length === 1);
    assert.equal(calls[0]!.signal.aborted, false);
    ep.close('ep3');
    assert.equal(calls[0]!.signal.aborted, true);
    const r = await pending;
    assert.equal(r.status, 404);
    assertError(r.json, { type: 'invalid_request_error', param: null, code: 'episode_not_open' }, /closed while this request ran/);

    calls.length = 0;
    const controller = new AbortController();
    const sdk = client.chat.completions.create({ model: 'm', messages: [user('hang')] }, { signal: controller.signal });
    await until('the handler', () => calls.length === 1);
    controller.abort();
    await assert.rejects(sdk, (e: unknown) => e instanceof OpenAI.APIUserAbortError);
    await until('the abort', () => calls[0]!.signal.aborted);
  });

  it('listens on 127.0.0.1 only: other loopback and interface addresses refuse', async () => {
    const connects = (host: string): Promise<boolean> =>
      new Promise((resolve) => {
        const s = net.connect({ host, port: ep.port });
        s.setTimeout(2000, () => (s.destroy(), resolve(false)));
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
    assert.equal(await connects('127.0.0.1'), true);
    const others = ['::1', ...Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => !a.internal).map((a) => a.address))];
    if (process.platform === 'linux') others.push('127.0.0.2'); // all of 127/8 is loopback there
    for (const host of others) assert.equal(await connects(host), false, host);
  });

  it('stop() aborts what is in flight and closes every connection: a process that used the endpoint exits by itself', async () => {
    const endpointJs = path.resolve(__dirname, '../../../../../src/rl/envs/agent/endpoint.js');
    const script = `
      const { AgentEndpoint } = require(${JSON.stringify(endpointJs)});
      const OpenAI = require(${JSON.stringify(require.resolve('openai'))}).default;
      (async () => {
        let signal;
        const ep = await AgentEndpoint.start({ modelName: 'm', complete: (e, r, s) => r.messages[0].content === 'hang'
          ? ((signal = s), new Promise(() => {}))
          : Promise.resolve({ choices: [{ content: 'hi', toolCalls: [], finishReason: 'stop' }], promptTokens: 1, completionTokens: 1 }) });
        ep.open('e');
        const client = new OpenAI({ baseURL: ep.baseUrl('e'), apiKey: ep.key, maxRetries: 0 });
        const r = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
        const hanging = client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hang' }] }).then(() => 'answered', (e) => e.constructor.name);
        while (signal === undefined) await new Promise((res) => setTimeout(res, 5));
        await ep.stop();
        console.log(JSON.stringify({ content: r.choices[0].message.content, aborted: signal.aborted, hanging: await hanging }));
      })();`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill(), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    assert.equal(code, 0, `the process did not exit by itself: ${err}`);
    assert.deepEqual(JSON.parse(out), { content: 'hi', aborted: true, hanging: 'APIConnectionError' });
  });
});
