// Your own agent program at scale (issue 41): 16 episodes of an agent program (test/fixtures/agents/
// followUp.mjs: the official openai client, two requests per episode, 64 new tokens each) one at a
// time against all 16 at once, in one run, on both schedules: lockstep (every live episode's request in
// one batch; an agent run's schedule while its episodes fit envOptions.concurrency) and concurrent (the
// requests pending whenever the sampler is free; a run with more episodes than that). Each episode is
// its own process talking to the run's endpoint. Tokens per second: the policy's sampled tokens over
// the wall time of the 16 episodes (process start-up, the client, the endpoint, sampling, the reward
// line), the sides interleaved (one, lockstep, concurrent, then the reverse; --rounds N, default 2), the
// median ratio with its spread, and the requests per sampling call each side made. The policy: a fresh
// Qwen3-shaped model (4 layers, width 256, Qwen's tokenizer and chat template) on the engine with the
// machine's threads. Target: ≥ 4×.
import * as path from 'node:path';
import { openEnvironment } from '../src/rl/envs/registry';
import { createPolicy } from '../src/rl/policies/createPolicy';
import { initBackend } from '../src/rl/policies/lm/models/tfjsBackend';
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
  // rows per sampling call: how well the schedule batched the programs' requests
  let calls = 0;
  let rows = 0;
  const counted = new Proxy(policy, {
    get(target, key, receiver) {
      if (key === 'sample')
        return (contexts: Parameters<typeof policy.sample>[0], rng: Parameters<typeof policy.sample>[1]) => {
          calls += 1;
          rows += contexts.length;
          return target.sample(contexts, rng);
        };
      const v: unknown = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  /** The sides: one at a time; all 16 in lockstep (an agent run's schedule when its episodes fit envOptions.concurrency); all 16 on the concurrent schedule (maxInFlight 16: a run with more episodes than that). */
  const SIDES = [
    { name: 'one at a time', maxInFlight: 1 },
    { name: '16 at once, lockstep', maxInFlight: 0 },
    { name: '16 at once, concurrent', maxInFlight: EPISODES },
  ] as const;
  const side = async (s: (typeof SIDES)[number]): Promise<number> => {
    [calls, rows] = [0, 0];
    const t = performance.now();
    const ts = await runEpisodes(specs, () => env.create(), counted, {
      maxTurns: 4,
      sampleRng: new Rng(1),
      verifierRng: new Rng(2),
      maxInFlight: s.maxInFlight,
    });
    const seconds = (performance.now() - t) / 1000;
    const failed = ts.filter((x) => x.termination === 'env_error');
    if (failed.length) throw new Error(`${failed.length} episodes failed: ${JSON.stringify(failed[0]!.outcome.details)}`);
    const tokens = ts.reduce((n, x) => n + x.turns.reduce((m, u) => m + (u.policy.tokens?.sampled.length ?? 0), 0), 0);
    console.log(
      `  ${s.name}: ${tokens} tokens in ${seconds.toFixed(1)} s = ${(tokens / seconds).toFixed(1)} tokens/s; ${calls} sampling calls, ${(rows / calls).toFixed(1)} requests each`,
    );
    return tokens / seconds;
  };
  try {
    await side(SIDES[1]); // warm-up
    const ratios: Record<string, number[]> = { lockstep: [], concurrent: [] };
    for (let r = 0; r < ROUNDS; r++) {
      console.log(`round ${r + 1}`);
      // interleaved, the order turned each round: one, lockstep, concurrent / concurrent, lockstep, one
      const order = r % 2 ? [...SIDES].reverse() : SIDES;
      const got = new Map<string, number>();
      for (const s of order) got.set(s.name, await side(s));
      const one = got.get(SIDES[0].name)!;
      ratios.lockstep!.push(got.get(SIDES[1].name)! / one);
      ratios.concurrent!.push(got.get(SIDES[2].name)! / one);
    }
    console.log('');
    for (const [name, rs] of Object.entries(ratios)) {
      const m = median(rs);
      console.log(
        `${EPISODES} agent programs at once (${name}) / one at a time: ${m.toFixed(2)}× tokens per second (median of ${ROUNDS}; ${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}) — target ≥ 4×: ${m >= 4 ? 'met' : 'MISSED'}`,
      );
      if (m < 4) process.exitCode = 1;
    }
  } finally {
    await env.dispose();
    await policy.dispose?.();
  }
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
});
