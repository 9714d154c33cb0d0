// Replay of an agent program's request: a stored turn's request (its whole conversation, rebuilt from
// what the turns store) sent again to the run's policy as it is now — the run's saved checkpoint, its
// trained weights — and answered as the endpoint would answer it (the text, the tool calls parsed from
// the model's own format), beside the answer stored with the turn. Nothing of the stored run starts a
// program: the policy answers alone. Reading the checkpoint and the model folder the stored config
// names is reading data (weights, a tokenizer, a chat template rendered by the sandboxed Jinja
// interpreter); the answer is returned, never run.
import type Database from 'better-sqlite3';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { storedRequest, type ResendResult } from '../shared/agentRequestView';
import { readStoredRunConfig } from '../shared/runConfig';
import { requestsOnlyEnvironment } from '../rl/envs/agent/agentEnv';
import { parseAnswer } from '../rl/envs/agent/toolCallText';
import { createPolicy } from '../rl/policies/createPolicy';
import type { Policy } from '../rl/policies/policy';
import { Rng } from '../rl/random';
import { policyRunInfo } from '../rl/train/trainingRun';
import { checkpointDirFor } from './openStore';
import { RunReader } from './runReader';

export class ResendError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'ResendError';
}

export interface ResendOptions {
  readonly trajectoryId: number;
  /** The turn whose request is sent again (0-based); default the last. */
  readonly turn?: number;
  /** Greedy decoding (temperature 0) instead of the run's sampling. */
  readonly greedy: boolean;
  /** The sampling stream's seed (ignored when greedy). */
  readonly seed: number;
  /** The weights: a checkpoint folder; default the run's own saved checkpoint beside the database. */
  readonly checkpoint?: string;
}

/** Sends a stored agent turn's request to the run's policy again (see the top of this file). */
export async function resendRequest(db: Database.Database, dbFile: string, o: ResendOptions): Promise<ResendResult> {
  const reader = new RunReader(db);
  const t = reader.trajectory(o.trajectoryId);
  if (!t) throw new ResendError(`no trajectory ${o.trajectoryId} in ${dbFile}. Fix: \`agent-rl show RUN\`, or the Runs tree, lists the trajectories`);
  const stored = reader.config(t.runId);
  if (typeof stored !== 'object' || stored === null || (stored as { env?: unknown }).env !== 'agent')
    throw new ResendError(`trajectory ${t.id} is of a run whose environment is not "agent": only an agent program's requests can be sent again`);
  const turn = o.turn ?? t.turnList.length - 1;
  const request = storedRequest(t.turnList, turn);
  if (typeof request === 'string') throw new ResendError(`trajectory ${t.id}: ${request}`);
  const checkpoint = path.resolve(o.checkpoint ?? checkpointDirFor(dbFile, t.runId));
  if (!fs.existsSync(path.join(checkpoint, 'checkpoint.json')))
    throw new ResendError(
      `run ${t.runId} has no saved checkpoint at ${checkpoint} (a run saves one when it finishes or is cancelled). Fix: give a checkpoint folder (--checkpoint DIR), or finish the run`,
    );
  const base = readStoredRunConfig(stored);
  // one request on the engine: llama.cpp (a GGUF written to the cache) and a KV plan for a batch of
  // the run's size would both be waste for one row
  const config = readStoredRunConfig({
    ...(stored as Record<string, unknown>),
    policyOptions: { ...base.policyOptions, init: checkpoint, rolloutEngine: 'engine' },
  });
  const policy = await createPolicy(config, { ...policyRunInfo(config), sampleRows: 1 }, requestsOnlyEnvironment());
  let sample;
  try {
    const answering: Policy = o.greedy ? (policy.greedy?.() ?? policy) : policy;
    const last = request.messages[request.messages.length - 1]!;
    [sample] = await answering.sample(
      [
        {
          task: { id: t.taskId, prompt: last.content, data: {} },
          turns: [],
          observation: { text: last.content, data: {}, request: { ...request, continuesFrom: 0 } },
        },
      ],
      new Rng(o.seed),
    );
  } finally {
    // the backend process lives on: the engine's memory and threads go with this request
    await policy.dispose?.();
  }
  if (!sample) throw new ResendError('the policy returned no answer');
  if (sample.refused) throw new ResendError(`trajectory ${t.id} turn ${turn}: ${sample.refused}`);
  const names = new Set(request.tools.map((s) => (s.function as { name?: unknown } | undefined)?.name).filter((n): n is string => typeof n === 'string'));
  const answer = parseAnswer(sample.text, names, () => `call_${crypto.randomBytes(12).toString('base64url')}`);
  const tk = sample.step.tokens;
  return {
    runId: t.runId,
    trajectoryId: t.id,
    turn,
    checkpoint,
    greedy: o.greedy,
    messages: request.messages.length,
    tools: [...names],
    stored: t.turnList[turn]!.actionText,
    text: sample.text,
    content: answer.content,
    toolCalls: answer.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    promptTokens: tk?.context.length ?? 0,
    completionTokens: tk?.sampled.length ?? 0,
    finish: answer.toolCalls.length > 0 ? 'tool_calls' : (sample.finish ?? 'stop'),
  };
}
