// The agent loop: many episodes advanced in lockstep as explicit state machines, so a batched policy
// samples one action for every live episode at once and the environments step concurrently.
//
//   resetting ──reset()──▶ awaiting_action ──policy.sample()──▶ stepping ──env.step()──▶ awaiting_action
//                                   │                                  └── done / budget / turn cap ──▶ verifying ──▶ done
// An environment that throws ends its own episode with termination 'env_error'; the batch goes on.
import type { EpisodeOutcome, Observation, TerminationReason, Trajectory, Turn } from '../../shared/types';
import type { Environment, Task } from '../envs/environment';
import type { Policy } from '../policies/policy';
import type { Rng } from '../random';

export type EpisodeState = 'resetting' | 'awaiting_action' | 'stepping' | 'verifying' | 'done';

export interface EpisodeSpec {
  readonly task: Task;
  readonly group: number;
  readonly indexInGroup: number;
}

export interface LoopOptions {
  /** Hard cap on turns per episode, above any environment budget. */
  readonly maxTurns: number;
  /** Draws the policy's actions. */
  readonly sampleRng: Rng;
  /** Drives the private verifier's random inputs. */
  readonly verifierRng: Rng;
  /** Accumulates where the time went: the policy's sampling, and environment steps with verification. */
  readonly timing?: PhaseTiming;
}

export interface PhaseTiming {
  generateMs: number;
  envMs: number;
}

class Episode {
  state: EpisodeState = 'resetting';
  observation: Observation = { text: '', data: {} };
  readonly turns: Turn[] = [];
  termination: TerminationReason = 'turn_cap';
  outcome: EpisodeOutcome | undefined;
  constructor(readonly spec: EpisodeSpec, readonly env: Environment, readonly policyVersion: number) {}

  finish(termination: TerminationReason): void {
    this.termination = termination;
    this.state = 'verifying';
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

const ENV_FAILED: EpisodeOutcome = { reward: 0, success: false, publicPass: false, privatePass: false };

/** Runs every episode to the end; returns trajectories in spec order with advantage 0. */
export async function runEpisodes(
  specs: readonly EpisodeSpec[],
  makeEnv: () => Environment,
  policy: Policy,
  options: LoopOptions,
): Promise<Trajectory[]> {
  const episodes = specs.map((spec) => new Episode(spec, makeEnv(), policy.version));
  try {
    await Promise.all(
      episodes.map(async (ep) => {
        try {
          ep.observation = await ep.env.reset(ep.spec.task);
          ep.state = 'awaiting_action';
        } catch (e) {
          ep.observation = { text: `environment failed to start: ${errorText(e)}`, data: { envError: true } };
          ep.finish('env_error');
        }
      }),
    );

    for (;;) {
      const live = episodes.filter((ep) => ep.state === 'awaiting_action');
      if (live.length === 0) break;
      const tSample = Date.now();
      const samples = await policy.sample(
        live.map((ep) => ({ task: ep.spec.task, observation: ep.observation, turns: ep.turns })),
        options.sampleRng,
      );
      const tStep = Date.now();
      if (options.timing) options.timing.generateMs += tStep - tSample;
      await Promise.all(
        live.map(async (ep, i) => {
          const sample = samples[i];
          if (!sample) throw new Error(`policy returned ${samples.length} samples for ${live.length} contexts`);
          if (sample.exhausted) {
            ep.finish('context_exhausted');
            return;
          }
          const action = ep.env.parseAction(sample.text);
          ep.state = 'stepping';
          let done: boolean;
          let termination: TerminationReason | undefined;
          try {
            const result = await ep.env.step(action);
            ep.observation = result.observation;
            done = result.done;
            termination = result.termination;
          } catch (e) {
            ep.observation = { text: `environment error: ${errorText(e)}`, data: { envError: true } };
            done = true;
            termination = 'env_error';
          }
          ep.turns.push({ index: ep.turns.length, actionText: sample.text, action, observation: ep.observation, policy: sample.step });
          if (done) ep.finish(termination ?? 'finished');
          else if (ep.turns.length >= options.maxTurns) ep.finish('turn_cap');
          else ep.state = 'awaiting_action';
        }),
      );
      if (options.timing) options.timing.envMs += Date.now() - tStep;
    }

    // Verification in spec order keeps the verifier's random stream deterministic. A verifier that
    // fails is the environment's failure, not the agent's: the episode becomes an env_error.
    const tVerify = Date.now();
    for (const ep of episodes) {
      if (ep.termination === 'env_error') {
        ep.outcome = ENV_FAILED;
      } else {
        try {
          ep.outcome = await ep.env.verify(options.verifierRng);
        } catch (e) {
          ep.outcome = { ...ENV_FAILED, details: { verifierError: errorText(e) } };
          ep.termination = 'env_error';
        }
      }
      ep.state = 'done';
    }
    if (options.timing) options.timing.envMs += Date.now() - tVerify;
  } finally {
    await Promise.allSettled(episodes.map((ep) => ep.env.close()));
  }

  return episodes.map((ep) => ({
    taskId: ep.spec.task.id,
    group: ep.spec.group,
    indexInGroup: ep.spec.indexInGroup,
    turns: ep.turns,
    termination: ep.termination,
    outcome: ep.outcome ?? ENV_FAILED,
    advantage: 0,
    policyVersion: ep.policyVersion,
  }));
}
