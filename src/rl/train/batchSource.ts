// Where an iteration's batch comes from. Synchronous: G new groups sampled by the current policy (and,
// with DAPO's dynamic sampling, groups that cannot teach anything replaced by new ones). Asynchronous:
// G finished groups taken from the rollout stream's queue, none older than maxStaleness versions. Both
// hand the learner trajectories with advantages assigned and say what they measured on the way.
import type { RunConfig } from '../../shared/runConfig';
import type { IterationMetrics, Trajectory } from '../../shared/types';
import type { Task } from '../envs/environment';
import type { RunEnvironment } from '../envs/environment';
import type { Policy } from '../policies/policy';
import type { Rng } from '../random';
import { EpisodeStream, runEpisodes, type EpisodeSpec, type PhaseTiming } from '../rollout/agentLoop';
import { AsyncRollout, oldestVersion } from './asyncRollout';
import { mean } from './iterationMetrics';
import { judgeAgreement, type JudgeExchange, type JudgeStage } from './judge/judgeStage';
import type { Learner } from './learner';

/** One iteration's trajectories, advantages assigned, with what collecting them measured. */
export interface CollectedBatch {
  readonly trajectories: Trajectory[];
  /** Groups dynamic sampling replaced (never trained on). */
  readonly replaced: ReadonlySet<number>;
  readonly zeroVarianceGroups: number;
  readonly resampledGroups: number;
  readonly timing: PhaseTiming;
  /** Staleness, and the asynchronous pipeline's queue and idle times; the judge's metrics, with a judge. */
  readonly pipeline: Partial<IterationMetrics>;
  /** Each group's exchange with the judge (reward.judge), for the store. */
  readonly judge?: readonly JudgeExchange[];
}

export interface BatchSource {
  start(): void;
  /** The next iteration's batch, for a learner now at policy version `version`. */
  next(version: number): Promise<CollectedBatch>;
  /** Stops sampling ahead (what is in flight is finished and dropped). Safe to call twice. */
  stop(): Promise<void>;
}

/** The random streams training draws from: task choice, sampling, the verifier's inputs. */
export interface TrainingStreams {
  readonly tasks: Rng;
  readonly sample: Rng;
  readonly verifier: Rng;
}

interface Sources {
  readonly config: RunConfig;
  readonly env: RunEnvironment;
  /** The policy that samples (SFT: the demonstrator). */
  readonly actor: Policy;
  readonly learner: Learner;
  readonly streams: TrainingStreams;
  /** Whether the actor is the policy being trained (staleness is measured only then). */
  readonly selfSampled: boolean;
  /** The judge whose scores join the environment's rewards before advantages are taken (reward.judge). */
  readonly judge?: JudgeStage;
}

/** Trajectories by group number, in their order. */
export function groupsOf(ts: readonly Trajectory[]): Map<number, Trajectory[]> {
  const m = new Map<number, Trajectory[]>();
  for (const t of ts) {
    let g = m.get(t.group);
    if (!g) m.set(t.group, (g = []));
    g.push(t);
  }
  return m;
}

/** The judge's exchanges and metrics for a batch (nothing without a judge). */
function judged(judge: JudgeStage | undefined, trajectories: readonly Trajectory[]): Pick<CollectedBatch, 'judge' | 'pipeline'> {
  if (!judge) return { pipeline: {} };
  const { exchanges, metrics } = judge.take();
  return { judge: exchanges, pipeline: { ...metrics, ...judgeAgreement(trajectories) } };
}

/** Whether a group can teach anything: some member that the environment did not fail has a non-zero advantage. */
export function informative(group: readonly Trajectory[]): boolean {
  return group.some((t) => t.termination !== 'env_error' && t.advantage !== 0);
}

export function batchSource(s: Sources): BatchSource {
  return s.config.mode === 'async' ? asyncBatches(s) : syncBatches(s);
}

const drawTask = (tasks: readonly Task[], rng: Rng): Task => tasks[rng.int(tasks.length)]!;

function syncBatches({ config, env, actor, learner, streams, selfSampled, judge }: Sources): BatchSource {
  const tasks = env.tasks().train;
  /** G groups × N episodes of new tasks, numbered from `firstGroup`, sampled by the actor. */
  const rollout = async (groups: number, firstGroup: number, timing: PhaseTiming): Promise<Trajectory[]> => {
    const specs: EpisodeSpec[] = [];
    for (let g = 0; g < groups; g++) {
      const task = drawTask(tasks, streams.tasks);
      for (let i = 0; i < config.groupSize; i++) specs.push({ task, group: firstGroup + g, indexInGroup: i });
    }
    const played = await runEpisodes(specs, () => env.create(), actor, {
      maxTurns: config.maxTurns,
      sampleRng: streams.sample,
      verifierRng: streams.verifier,
      timing,
      maxInFlight: config.maxInFlight,
      ...(env.maxOpen !== undefined ? { maxOpen: env.maxOpen } : {}),
    });
    // the judge's reward joins before advantages are taken, so dynamic sampling sees it too
    return judge ? judge.judge(played) : played;
  };
  return {
    start: () => undefined,
    stop: () => Promise.resolve(),
    next: async (version) => {
      const timing: PhaseTiming = { generateMs: 0, envMs: 0 };
      const trajectories = await rollout(config.groupsPerIteration, 0, timing);
      let zeroVarianceGroups = learner.assignAdvantages(trajectories).zeroVarianceGroups;
      const replaced = new Set<number>();
      let resampledGroups = 0;
      if (config.method === 'grpo' && config.algorithm.dynamicSampling > 0) {
        // DAPO: a group that cannot teach anything is dropped and a new one sampled in its place, until
        // the batch holds groupsPerIteration informative groups or the rounds run out
        const drop = (ts: readonly Trajectory[]): number => {
          let useful = 0;
          for (const [g, members] of groupsOf(ts)) {
            if (informative(members)) useful += 1;
            else replaced.add(g);
          }
          return useful;
        };
        let useful = drop(trajectories);
        for (let round = 0; round < config.algorithm.dynamicSampling && useful < config.groupsPerIteration; round++) {
          const missing = config.groupsPerIteration - useful;
          const extra = await rollout(missing, config.groupsPerIteration + resampledGroups, timing);
          resampledGroups += missing;
          zeroVarianceGroups += learner.assignAdvantages(extra).zeroVarianceGroups;
          trajectories.push(...extra);
          useful += drop(extra);
        }
        // groups still uninformative after the last round stay out too: they would only dilute the batch
      }
      // staleness for every run that samples itself (seed 001): versions between the weights that
      // sampled a group and the ones it updates (0 by construction here); SFT's demonstrations have no
      // version to be behind
      const behind = selfSampled ? [...groupsOf(trajectories).values()].map((g) => version - oldestVersion(g)) : undefined;
      const j = judged(judge, trajectories);
      const pipeline = { ...(behind ? { stalenessMean: mean(behind), stalenessMax: Math.max(0, ...behind) } : {}), ...j.pipeline };
      return { trajectories, replaced, zeroVarianceGroups, resampledGroups, timing, pipeline, ...(j.judge ? { judge: j.judge } : {}) };
    },
  };
}

/** The asynchronous mode: the rollout stream samples into a queue of finished groups while the learner learns; both share the policy's engines. */
function asyncBatches({ config, env, actor, learner, streams, judge }: Sources): BatchSource {
  const tasks = env.tasks().train;
  let streamGroup = 0;
  const stream = new AsyncRollout({
    capacity: config.queueGroups > 0 ? config.queueGroups : (config.maxStaleness + 1) * config.groupsPerIteration,
    groupsPerTake: config.groupsPerIteration,
    maxStaleness: config.maxStaleness,
    producer: (side) =>
      new EpisodeStream(actor, {
        maxTurns: config.maxTurns,
        sampleRng: streams.sample,
        verifierRng: streams.verifier,
        timing: side.timing,
        maxInFlight: config.maxInFlight,
        ...(env.maxOpen !== undefined ? { maxOpen: env.maxOpen } : {}),
        makeEnv: () => env.create(),
        onGroup: (group) => side.push(group),
        nextGroup: () => {
          const admitted = side.admit();
          if (admitted !== 'start') return admitted;
          const task = drawTask(tasks, streams.tasks);
          const group = streamGroup++;
          return Array.from({ length: config.groupSize }, (_, i) => ({ task, group, indexInGroup: i }));
        },
      }),
  });
  return {
    start: () => stream.start(),
    stop: () => stream.stop(),
    next: async (version) => {
      // G finished groups from the stream, none older than maxStaleness versions, numbered 0 … G−1
      const taken = await stream.take(version);
      const taken0 = taken.groups.flatMap((g, i) => g.map((t) => ({ ...t, group: i })));
      const trajectories = judge ? await judge.judge(taken0) : taken0;
      const j = judged(judge, trajectories);
      const produced = stream.stats();
      const hist = [0, 1, 2].map((k) => taken.staleness.filter((s) => s === k).length);
      const zeroVarianceGroups = learner.assignAdvantages(trajectories).zeroVarianceGroups;
      return {
        trajectories,
        replaced: new Set(),
        zeroVarianceGroups,
        resampledGroups: 0,
        timing: produced.timing,
        pipeline: {
          stalenessMean: mean(taken.staleness),
          stalenessMax: Math.max(0, ...taken.staleness),
          staleness0: hist[0]!,
          staleness1: hist[1]!,
          staleness2: hist[2]!,
          staleness3plus: taken.staleness.filter((s) => s >= 3).length,
          droppedStaleGroups: taken.dropped,
          queueDepth: taken.queueDepth,
          learnerIdleMs: taken.waitedMs,
          rolloutBusyMs: produced.busyMs,
          rolloutBlockedMs: produced.blockedMs,
          ...j.pipeline,
        },
        ...(j.judge ? { judge: j.judge } : {}),
      };
    },
  };
}
