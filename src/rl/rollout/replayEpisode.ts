// Scoring a stored episode again: its recorded action texts are stepped through a fresh episode of the
// run's environment and the environment's own verify() scores the result. Nothing is re-implemented
// here — the verifier, the reward file and every step's bookkeeping (tool calls counted, the last code
// block kept) are the environment's. A verifier that draws random cases (binary-search's private one)
// draws them from the re-score's own stream, not training's, so such a score can differ by chance.
//
// Replay re-runs tools: an observation that comes out different from the stored one (a tool that reads
// the clock, a sandbox level that changed) is counted, so the report can say the re-score saw another
// episode than the one trained on.
import type { EpisodeOutcome, TerminationReason } from '../../shared/types';
import type { RunEnvironment, Task } from '../envs/environment';
import type { Rng } from '../random';

export interface ReplayTurn {
  readonly actionText: string;
  readonly observationText: string;
}

export interface ReplayResult {
  readonly outcome: EpisodeOutcome;
  readonly termination: TerminationReason;
  /** Turns stepped (fewer than given when the environment ended the episode earlier than the record). */
  readonly replayed: number;
  /** Replayed turns whose observation text differs from the stored one (the last turn excluded when it was edited). */
  readonly differingObservations: number;
}

/** The task of a stored trajectory, from the environment's id lookup or its task sets; undefined when it is gone. */
export function findTask(env: RunEnvironment, taskId: string): Task | undefined {
  const byId = env.taskFromId?.(taskId);
  if (byId) return byId;
  const { train, heldOut } = env.tasks();
  return train.find((t) => t.id === taskId) ?? heldOut.find((t) => t.id === taskId);
}

export class ReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

/**
 * Steps `turns` through a fresh episode of `env` on task `taskId` and verifies it. `editedLast`: the last
 * turn's action was edited (its observation cannot match the record). Throws when the task is unknown,
 * a step throws, or the verifier (a reward file) raises: the caller records that as the trajectory's error.
 */
export async function replayEpisode(env: RunEnvironment, taskId: string, turns: readonly ReplayTurn[], rng: Rng, editedLast = false): Promise<ReplayResult> {
  const task = findTask(env, taskId);
  if (!task) throw new ReplayError(`task ${JSON.stringify(taskId.slice(0, 200))} is not among the environment's tasks (its task file changed?)`);
  const episode = env.create();
  try {
    await episode.reset(task);
    let termination: TerminationReason = 'turn_cap';
    let replayed = 0;
    let differing = 0;
    for (const [i, turn] of turns.entries()) {
      const result = await episode.step(episode.parseAction(turn.actionText));
      replayed += 1;
      const edited = editedLast && i === turns.length - 1;
      if (!edited && result.observation.text !== turn.observationText) differing += 1;
      if (result.done) {
        termination = result.termination ?? 'finished';
        break;
      }
    }
    const outcome = await episode.verify(rng);
    return { outcome, termination, replayed, differingObservations: differing };
  } finally {
    await episode.close();
  }
}
