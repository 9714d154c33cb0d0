// An agent run's reward other than the program's own {"reward": r} line (envOptions.reward): exact_match
// of the final answer, or a Python reward file scored in the sandbox over the episode's final
// conversation, through the same reward pool as the workspace environment's (workspace/rewardPool.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentEnvOptions } from '../../../shared/optionSpecs';
import type { Task, TaskSource } from '../environment';
import { levelHolds } from '../../sandbox/isolation';
import { DEFAULT_LIMITS, limitsOf } from '../../sandbox/limits';
import { SandboxPools } from '../../sandbox/sandboxPools';
import { openRewardPool } from '../workspace/rewardPool';
import { workspaceTaskData } from '../workspace/taskRecords';
import { rewardTask } from '../workspace/taskSource';
import { ToolZygotes, type SessionPool } from '../workspace/toolSession';
import { exactMatch, pythonReward, RewardError, type AgentRewardTrajectory, type RewardResult } from '../workspace/workspaceReward';
import { AgentEnvError } from './agentProgram';

/** A reward other than the program's own line: exact_match, or a reward file's sessions. */
export type Scorer = { readonly kind: 'exact_match' } | { readonly kind: 'file'; readonly file: string; readonly pool: SessionPool };

/** A reward file's or exact_match's score of an episode. */
export async function scoreWith(scorer: Scorer, task: Task, trajectory: AgentRewardTrajectory): Promise<RewardResult> {
  if (scorer.kind === 'exact_match') return { score: exactMatch(trajectory.answer, workspaceTaskData(task).groundTruth) ? 1 : 0, metrics: {}, extras: {} };
  return pythonReward(scorer.pool, scorer.file, rewardTask(task), trajectory);
}

/**
 * The run's reward other than the program's own line (envOptions.reward): exact_match, or a Python file
 * imported in the sandbox and checked on an empty episode of the first training task before the run
 * starts, so that a reward that cannot score fails now, naming the file, not after the first group.
 */
export async function openScorer(
  o: AgentEnvOptions,
  root: string,
  tasks: TaskSource,
): Promise<{ scorer: Scorer | undefined; describe: string; close: () => Promise<void> }> {
  if (o.reward === '') return { scorer: undefined, describe: "the program's last JSON line", close: () => Promise.resolve() };
  if (o.reward === 'exact_match') return { scorer: { kind: 'exact_match' }, describe: 'exact_match of the final answer', close: () => Promise.resolve() };
  if (!o.reward.endsWith('.py'))
    throw new AgentEnvError(
      `envOptions.reward "${o.reward}" is neither empty (the program's own {"reward": r} line), exact_match, nor a Python file. Fix: name a .py file defining reward(task, trajectory), or leave it empty`,
    );
  const abs = path.resolve(root, o.reward);
  let source: string;
  try {
    source = fs.readFileSync(abs, 'utf8');
  } catch (e) {
    throw new AgentEnvError(
      `envOptions.reward: cannot read ${abs} (${(e as NodeJS.ErrnoException).code ?? String(e)}). Fix: check the path (relative to the config file's folder: ${root})`,
    );
  }
  const pools = new SandboxPools();
  const zygotes = new ToolZygotes();
  let pool: SessionPool | undefined;
  const close = async (): Promise<void> => {
    pool?.close();
    zygotes.close();
    await pools.close();
  };
  try {
    const { level, python } = pools.get(o);
    const limits = limitsOf({ timeoutMs: o.rewardTimeoutMs, tailBytes: DEFAULT_LIMITS.tailBytes, outputCapBytes: DEFAULT_LIMITS.outputCapBytes });
    const file = path.basename(abs);
    pool = await openRewardPool({ level, python, limits, zygotes }, { name: file, source }, o.poolSize);
    const scorer: Scorer = { kind: 'file', file, pool };
    const first = tasks.train[0] ?? tasks.heldOut[0];
    if (first) {
      const empty: AgentRewardTrajectory = {
        messages: [{ role: 'user', content: first.prompt }],
        answer: null,
        tool_calls: 0,
        requests: 0,
        printed: null,
        exit_code: null,
      };
      try {
        await scoreWith(scorer, first, empty);
      } catch (e) {
        if (e instanceof RewardError) throw new AgentEnvError(`${e.message} (checked on an empty episode of task ${first.id})`);
        throw e;
      }
    }
    return { scorer, describe: `${file} (sandbox level ${level}: ${levelHolds(level, python)})`, close };
  } catch (e) {
    await close();
    throw e;
  }
}
