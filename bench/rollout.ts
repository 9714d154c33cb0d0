// Wall time per 100 trajectories of whole training iterations (rollout and update) on the code
// environment, every tool call answered 100 ms late (a remote tool's or a busy sandbox's latency), in
// one run: sync with one episode at a time (maxInFlight 1); sync with the iteration's episodes all in
// flight, lockstep (maxInFlight 0) and on the concurrent schedule (maxInFlight 32); and mode "async"
// (the rollout stream and the learner each at its own pace; the stream on the concurrent schedule,
// in flight as many as the queue admits) at maxStaleness 1 (the default) and 2. Each figure is the
// wall time from the first iteration's start to the last one's end (the first's warm-up included,
// evaluations not), over every trajectory trained on. The policy is a small fresh model on the character
// vocabulary (a Hugging Face folder) on the engine, every weight trained, with the machine's cores. Its outputs
// are mostly format errors, which the code environment answers without the sandbox (the sandbox pool's
// parallelism has its own bench, sandboxPool), and earn reward 0, so the learner is told not to skip
// zero-advantage episodes: its step (KL term, clipping, AdamW) costs what an informative batch's would.
// The async rows run at maxStaleness 1 (the default) and 2, with π_old recomputed and the truncated
// importance correction (the default) and with the behaviour log-probs as π_old (no extra pass).
// Targets (issue 15): concurrent ≥ 3× one at a time; async, as configured by default, ≥ 1.5× the faster
// sync concurrent figure, with staleness within its bound. The other async rows are for comparison.
// At maxStaleness 1 a group may start at most one take ahead while the learner updates, so async hides
// the update (U) behind the rollout (R) and no more: at most (R + U) / R, printed beside it; and the
// rollout and the learner share two cores here, so async can only fill the tools' waits.
import * as os from 'node:os';
import type { RunEnvironment } from '../src/rl/envs/environment';
import { openEnvironment } from '../src/rl/envs/registry';
import { MemorySink } from '../src/rl/train/sink';
import { train } from '../src/rl/train/trainer';
import { validateRunConfig } from '../src/shared/runConfig';
import type { IterationMetrics } from '../src/shared/types';

const LATENCY_MS = 100;

/** The code environment with every step's answer delayed by `ms`. */
function withLatency(env: RunEnvironment, ms: number): RunEnvironment {
  return {
    ...env,
    create: () => {
      const e = env.create();
      return {
        reset: (t) => e.reset(t),
        parseAction: (x) => e.parseAction(x),
        step: async (a) => {
          const r = await e.step(a);
          await new Promise((resolve) => setTimeout(resolve, ms));
          return r;
        },
        verify: (rng) => e.verify(rng),
        close: () => e.close(),
      };
    },
  };
}

interface Schedule {
  readonly name: string;
  readonly iterations: number;
  readonly config: Record<string, unknown>;
}

const BASE = {
  env: 'code',
  policy: 'transformer',
  method: 'grpo',
  seed: 3,
  groupsPerIteration: 4,
  groupSize: 8,
  maxTurns: 3,
  evalEpisodes: 4,
  evalInterval: 0,
  checkpointEvery: 0,
  envOptions: { taskSet: 'formulas', maxExecutions: 3 },
  // a random-init model earns 0 everywhere: without this the learner would skip every zero-advantage
  // episode and take no step; with it, each iteration's step costs what an informative batch's does
  algorithm: { skipZeroAdvantage: false },
  policyOptions: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 512, maxNewTokens: 24 },
};

const SCHEDULES: Schedule[] = [
  { name: 'sync, one episode at a time', iterations: 2, config: { ...BASE, maxInFlight: 1 } },
  { name: 'sync, lockstep (all in flight)', iterations: 10, config: { ...BASE, maxInFlight: 0 } },
  { name: 'sync, concurrent (maxInFlight 32)', iterations: 10, config: { ...BASE, maxInFlight: 32 } },
  { name: 'async, maxStaleness 1', iterations: 10, config: { ...BASE, mode: 'async', maxStaleness: 1 } },
  { name: 'async, maxStaleness 2', iterations: 10, config: { ...BASE, mode: 'async', maxStaleness: 2 } },
  {
    name: 'async, 1, π_old = behaviour',
    iterations: 10,
    config: { ...BASE, mode: 'async', maxStaleness: 1, algorithm: { ...BASE.algorithm, oldLogprobs: 'behaviour' } },
  },
  {
    name: 'async, 2, π_old = behaviour',
    iterations: 10,
    config: { ...BASE, mode: 'async', maxStaleness: 2, algorithm: { ...BASE.algorithm, oldLogprobs: 'behaviour' } },
  },
];

interface Figure {
  readonly msPer100: number;
  readonly metrics: IterationMetrics[];
}

async function measure(s: Schedule): Promise<Figure> {
  const config = validateRunConfig({ ...s.config, iterations: s.iterations });
  const sink = new MemorySink();
  let start: number | undefined;
  let end: number | undefined;
  // the run disposes the environment it is given (its warm pool)
  await train(config, {
    sink,
    environment: withLatency(await openEnvironment(config), LATENCY_MS),
    onEvent: (e) => {
      if (e.kind !== 'phase') return;
      if (e.phase.kind === 'iteration' && e.phase.iteration === 1) start = performance.now();
      if (e.phase.kind === 'evaluating' && e.phase.iteration === config.iterations) end = performance.now();
    },
  });
  const metrics = sink.iterations.map((r) => r.metrics);
  const trajectories = metrics.reduce((a, m) => a + m.trajectories, 0);
  return { msPer100: ((end! - start!) / trajectories) * 100, metrics };
}

async function main(): Promise<void> {
  console.log(
    `training iterations on the code environment, tool latency ${LATENCY_MS} ms, ${BASE.groupsPerIteration}×${BASE.groupSize} episodes of up to ${BASE.maxTurns} turns per iteration, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
  );
  const figures: Figure[] = [];
  for (const s of SCHEDULES) {
    const f = await measure(s);
    figures.push(f);
    const per = (k: 'phaseGenerateMs' | 'phaseEnvMs' | 'phaseUpdateMs' | 'phaseReferenceMs'): string =>
      (f.metrics.reduce((a, m) => a + (m[k] ?? 0), 0) / f.metrics.length).toFixed(0);
    console.log(
      `  ${s.name.padEnd(34)} ${(f.msPer100 / 1000).toFixed(2)} s per 100 trajectories  (per iteration: sampling ${per('phaseGenerateMs')} ms, waiting on tools ${per('phaseEnvMs')} ms, learner ${per('phaseReferenceMs')} + ${per('phaseUpdateMs')} ms)`,
    );
  }
  const [one, lockstep, concurrent, ...asyncs] = figures as [Figure, Figure, Figure, Figure, Figure, Figure, Figure];
  const sync = lockstep.msPer100 <= concurrent.msPer100 ? lockstep : concurrent;
  const r1 = one.msPer100 / concurrent.msPer100;
  console.log(
    `  concurrent (maxInFlight 32) / one at a time: ${r1.toFixed(2)}×  (target ≥ 3×: ${r1 >= 3 ? 'met' : 'NOT met'}); lockstep / one at a time: ${(one.msPer100 / lockstep.msPer100).toFixed(2)}×`,
  );
  let atDefault = 0;
  let within = true;
  asyncs.forEach((f, k) => {
    const bound = (k % 2) + 1;
    const am = f.metrics;
    const sum = (get: (m: IterationMetrics) => number | undefined): number => am.reduce((a, m) => a + (get(m) ?? 0), 0);
    const maxSeen = Math.max(0, ...am.map((m) => m.stalenessMax ?? 0));
    within &&= maxSeen <= bound;
    const mean = (get: (m: IterationMetrics) => number | undefined): string => (sum(get) / am.length).toFixed(0);
    const r = sync.msPer100 / f.msPer100;
    if (k === 0) atDefault = r;
    console.log(
      `  ${SCHEDULES[3 + k]!.name} / the faster sync concurrent: ${r.toFixed(2)}×; staleness of the groups trained on (versions behind) 0: ${sum((m) => m.staleness0)}, 1: ${sum((m) => m.staleness1)}, 2: ${sum((m) => m.staleness2)}, 3+: ${sum((m) => m.staleness3plus)} (max ${maxSeen}); dropped as too old: ${sum((m) => m.droppedStaleGroups)}`,
    );
    console.log(
      `    per iteration: learner waited ${mean((m) => m.learnerIdleMs)} ms, rollout busy ${mean((m) => m.rolloutBusyMs)} ms and held back ${mean((m) => m.rolloutBlockedMs)} ms, ${(sum((m) => m.queueDepth) / am.length).toFixed(1)} groups queued at each take`,
    );
  });
  const per = (k: 'phaseGenerateMs' | 'phaseEnvMs' | 'phaseReferenceMs' | 'phaseUpdateMs'): number =>
    sync.metrics.reduce((a, m) => a + (m[k] ?? 0), 0) / sync.metrics.length;
  const R = per('phaseGenerateMs') + per('phaseEnvMs');
  const U = per('phaseReferenceMs') + per('phaseUpdateMs');
  console.log(
    `  the faster sync concurrent, per iteration: rollout R ${R.toFixed(0)} ms, update U ${U.toFixed(0)} ms; one take ahead gains at most (R + U) / R = ${((R + U) / R).toFixed(2)}×`,
  );
  console.log(
    `  async as configured by default (maxStaleness 1, π_old recomputed, truncated IS) / the faster sync concurrent: ${atDefault.toFixed(2)}×  (target ≥ 1.5×: ${atDefault >= 1.5 ? 'met' : 'NOT met'}); staleness within each bound: ${within ? 'yes' : 'NO'}`,
  );
  if (r1 < 3 || atDefault < 1.5 || !within) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
