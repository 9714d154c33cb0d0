// Your own agent program at scale (issue 41): 16 episodes of an agent program (test/fixtures/agents/
// followUp.mjs: the official openai client, two requests per episode, 64 new tokens each) one at a
// time against all 16 at once, in one run. Each episode is its own process talking to the run's
// endpoint; at once, their pending requests join the loop's sampling batches, so 16 programs are not 16
// times slower than one. Tokens per second: the policy's sampled tokens over the wall time of the 16
// episodes (process start-up, the client, the endpoint, sampling, the reward line), the sides
// interleaved (one, all, all, one, …; --rounds N pairs, default 2), the median ratio with its spread.
// The policy: a fresh Qwen3-shaped model (4 layers, width 256, Qwen's tokenizer and chat template) on
// the engine with the machine's threads. Target: ≥ 4×.
import * as path from 'node:path';
import { openEnvironment } from '../src/rl/envs/registry';
import { createPolicy } from '../src/rl/policies/createPolicy';
import { initBackend } from '../src/rl/policies/transformer/backend';
import { Rng } from '../src/rl/random';
import { runEpisodes } from '../src/rl/rollout/agentLoop';
import { policyRunInfo } from '../src/rl/train/trainingRun';
import { validateRunConfig } from '../src/shared/runConfig';
import { freshChatModel } from '../test/helpers/freshPolicy';
import { median } from './torchServer';

const ROOT = path.resolve(__dirname, '..', '..');
const EPISODES = 16;
const at = process.argv.indexOf('--rounds');
const ROUNDS = at > 0 ? Number(process.argv[at + 1]) : 2;

async function main(): Promise<void> {
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a whole number ≥ 1 (got ${process.argv[at + 1]})`);
  const model = freshChatModel({ layers: 4, hidden: 256, heads: 4, kvHeads: 2 });
  await initBackend('wasm');
  const config = validateRunConfig({
    env: 'agent',
    policy: 'transformer',
    method: 'grpo',
    groupSize: EPISODES,
    groupsPerIteration: 1,
    envOptions: { root: path.join(ROOT, 'test', 'fixtures', 'agents'), command: ['node', 'followUp.mjs'], tasks: 'tasks.jsonl' },
    policyOptions: { model, loraRank: 8, maxNewTokens: 64, contextLength: 2048 },
  });
  process.env.AGENT_MODE = 'keep';
  process.env.AGENT_MAX_TOKENS = '64';
  const env = await openEnvironment(config);
  const policy = await createPolicy(config, policyRunInfo(config), env).catch(async (e: unknown) => {
    await env.dispose(); // the endpoint would keep the process alive
    throw e;
  });
  console.log(`policy: ${policy.compute}`);
  const task = env.tasks().train[0]!;
  const specs = Array.from({ length: EPISODES }, (_, i) => ({ task, group: 0, indexInGroup: i }));
  const side = async (inFlight: number): Promise<number> => {
    const t = performance.now();
    const ts = await runEpisodes(specs, () => env.create(), policy, { maxTurns: 4, sampleRng: new Rng(1), verifierRng: new Rng(2), maxInFlight: inFlight });
    const seconds = (performance.now() - t) / 1000;
    const failed = ts.filter((x) => x.termination === 'env_error');
    if (failed.length) throw new Error(`${failed.length} episodes failed: ${JSON.stringify(failed[0]!.outcome.details)}`);
    const tokens = ts.reduce((n, x) => n + x.turns.reduce((m, u) => m + (u.policy.tokens?.sampled.length ?? 0), 0), 0);
    console.log(
      `  ${inFlight === 1 ? 'one at a time' : `${inFlight} at once`}: ${tokens} tokens in ${seconds.toFixed(1)} s = ${(tokens / seconds).toFixed(1)} tokens/s`,
    );
    return tokens / seconds;
  };
  try {
    await side(EPISODES); // warm-up
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      console.log(`round ${r + 1}`);
      const order = r % 2 ? [EPISODES, 1] : [1, EPISODES];
      const got: Record<number, number> = {};
      for (const n of order) got[n] = await side(n);
      ratios.push(got[EPISODES]! / got[1]!);
    }
    const m = median(ratios);
    console.log(
      `\n${EPISODES} agent programs at once / one at a time: ${m.toFixed(2)}× tokens per second (median of ${ROUNDS}; ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) — target ≥ 4×: ${m >= 4 ? 'met' : 'MISSED'}`,
    );
    if (m < 4) process.exitCode = 1;
  } finally {
    await env.dispose();
    await policy.dispose?.();
  }
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
});
