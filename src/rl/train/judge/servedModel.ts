// A local checkpoint served as an OpenAI-compatible chat-completions endpoint (`agent-rl serve`): the
// offline judge of docs/judge.md, or any client that speaks OpenAI's API. It is the agent environment's
// own endpoint (envs/agent/endpoint.ts: loopback only, a bearer key, OpenAI's request checks and
// answer shapes) with one episode, "serve", that stays open; each request is rendered through the
// checkpoint's chat template by the workbench's tokenizer and answered by the policy's greedy view
// (temperature 0 whatever the request says: a judge's answer should not depend on a draw), within the
// request's max_tokens and the server's own cap. Requests are answered one at a time, in order.
// Optionally a named action grammar (envs/actionGrammar.ts, e.g. judge-scores-4) constrains every answer,
// so a model too small to follow the judge's instructions still answers in the form the judge parses.
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import type { ActionGrammarName } from '../../envs/actionGrammar';
import { message, toolSchemas } from '../../envs/agent/agentEnv';
import { AgentEndpoint, EndpointError, type ChatRequest, type ChatResult } from '../../envs/agent/endpoint';
import { parseAnswer } from '../../envs/agent/toolCallText';
import type { RunEnvironment } from '../../envs/environment';
import { createPolicy } from '../../policies/createPolicy';
import type { Policy } from '../../policies/policy';
import { Rng } from '../../random';
import { validateRunConfig } from '../../../shared/runConfig';
import { policyRunInfo } from '../trainingRun';

export interface ServeOptions {
  /** The checkpoint folder (a Hugging Face folder with a chat template in tokenizer_config.json). */
  readonly model: string;
  /** 127.0.0.1's port; 0 = a free one. */
  readonly port: number;
  /** The most tokens an answer has (a request's max_tokens may ask for fewer, not more). */
  readonly maxTokens: number;
  /** The context the model is given, in tokens (prompt and answer); 0 = its max_position_embeddings up to 2048. */
  readonly contextLength: number;
  readonly rolloutEngine: 'engine' | 'llama.cpp';
  /** A named grammar every answer is constrained to, if any. */
  readonly grammar?: ActionGrammarName;
  /** The bearer key clients must send; default a fresh random one. */
  readonly key?: string;
}

export interface ServedModel {
  /** The base URL up to /v1 (what a judge's baseUrl names; clients post to {baseUrl}/chat/completions). */
  readonly baseUrl: string;
  readonly key: string;
  readonly modelName: string;
  /** The compute path the policy took (engine, llama.cpp, tfjs) and the model. */
  readonly compute: string;
  stop(): Promise<void>;
}

/** The one episode a served model's requests belong to (its URL's path: /episodes/serve/v1). */
const EPISODE = 'serve';

/** What the policy is built for: no tasks, no episodes; the grammar, when one is asked for. */
function servingEnvironment(grammar: ActionGrammarName | undefined): RunEnvironment {
  return {
    name: 'agent',
    description: 'a checkpoint served on an OpenAI-compatible endpoint (agent-rl serve)',
    create: () => {
      throw new Error('a served model runs no episodes');
    },
    tasks: () => ({ train: [], heldOut: [] }),
    ...(grammar !== undefined ? { stop: { strings: [], grammar } } : {}),
    dispose: () => Promise.resolve(),
  };
}

/** Loads the checkpoint and starts its endpoint; the caller stops it. */
export async function serveModel(o: ServeOptions): Promise<ServedModel> {
  const model = path.resolve(o.model);
  const modelName = path.basename(model);
  // a run config only to build the policy through the one pipeline every run uses (chat template,
  // compute path, memory plan); nothing is trained and no program starts (envOptions' command and tasks are never read)
  const config = validateRunConfig({
    env: 'agent',
    policy: 'transformer',
    method: 'grpo',
    envOptions: { command: ['agent-rl-serve'], tasks: 'none.jsonl' },
    policyOptions: {
      model,
      loraRank: 0,
      maxNewTokens: o.maxTokens,
      contextLength: o.contextLength,
      rolloutEngine: o.rolloutEngine,
      constrainedDecoding: o.grammar !== undefined,
    },
  });
  const policy = await createPolicy(config, { ...policyRunInfo(config), sampleRows: 1 }, servingEnvironment(o.grammar));
  const greedy: Policy = policy.greedy?.() ?? policy;
  let queue: Promise<unknown> = Promise.resolve();
  const answer = async (request: ChatRequest, signal: AbortSignal): Promise<ChatResult> => {
    if (request.n !== 1)
      throw new EndpointError(
        400,
        `n = ${request.n}: this endpoint answers greedily, one answer per request`,
        'invalid_request_error',
        'n',
        'unsupported_value',
      );
    signal.throwIfAborted();
    const messages = request.messages.map(message);
    const last = messages[messages.length - 1]!;
    const agentRequest = {
      messages,
      tools: toolSchemas(request),
      continuesFrom: 0,
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      ...(request.stop.length > 0 ? { stop: request.stop } : {}),
    };
    const task = { id: EPISODE, prompt: last.content, data: {} };
    const [sample] = await greedy.sample([{ task, turns: [], observation: { text: last.content, data: {}, request: agentRequest } }], new Rng(0));
    if (!sample) throw new Error('the policy returned no answer');
    if (sample.refused !== undefined) throw new EndpointError(400, sample.refused, 'invalid_request_error', 'messages', 'unsupported_value');
    if (sample.exhausted === true)
      throw new EndpointError(
        400,
        `the conversation fills the model's context${o.contextLength > 0 ? ` (${o.contextLength} tokens)` : ''}. Fix: a shorter request, or serve with a larger --context`,
        'invalid_request_error',
        'messages',
        'context_length_exceeded',
      );
    const names = new Set(request.toolChoice === 'none' ? [] : request.tools.map((t) => t.name));
    const parsed = parseAnswer(sample.text, names, () => `call_${crypto.randomBytes(12).toString('base64url')}`);
    const calls = request.parallelToolCalls ? parsed.toolCalls : parsed.toolCalls.slice(0, 1);
    const tk = sample.step.tokens;
    const decode = sample.decode;
    return {
      choices: [
        {
          content: parsed.content,
          toolCalls: calls,
          finishReason: calls.length > 0 ? 'tool_calls' : (sample.finish ?? 'stop'),
          ...(request.logprobs && tk && decode ? { logprobs: tk.sampled.map((id, i) => ({ token: decode([id]), logprob: tk.logprobs[i]! })) } : {}),
        },
      ],
      promptTokens: tk?.context.length ?? 0,
      completionTokens: tk?.sampled.length ?? 0,
    };
  };
  let endpoint: AgentEndpoint;
  try {
    endpoint = await AgentEndpoint.start({
      modelName,
      port: o.port,
      ...(o.key !== undefined ? { key: o.key } : {}),
      // one request at a time: the policy samples one batch at once
      complete: (_episode, request, signal) => {
        const next = queue.then(() => answer(request, signal));
        queue = next.catch(() => undefined);
        return next;
      },
    });
  } catch (e) {
    await policy.dispose?.();
    throw e;
  }
  endpoint.open(EPISODE);
  return {
    baseUrl: endpoint.baseUrl(EPISODE),
    key: endpoint.key,
    modelName,
    compute: policy.compute,
    stop: async () => {
      await endpoint.stop();
      await queue;
      await policy.dispose?.();
    },
  };
}
