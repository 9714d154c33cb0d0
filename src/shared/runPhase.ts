// What a run is doing, from its first second: the trainer reports phases (loading, warm start,
// evaluating, iteration k, saving), the worker forwards them, the host and the CLI say them. Also the
// progress line's figures and the ETA, shared by the status bar, the notification and the CLI.
import { fixed, percent } from './format';
import { isNumber, isObject, isString } from './protocol/guards';

export type RunPhase =
  /** Building the policy (backend, model, tokenizer) and the environment's tasks. */
  | { readonly kind: 'loading' }
  /** Loading the warm start checkpoint (policyOptions.init). */
  | { readonly kind: 'warm-start'; readonly from: string }
  /** Evaluating after `iteration` (0 = before training). */
  | { readonly kind: 'evaluating'; readonly iteration: number }
  /** Rollout and update of iteration `iteration` (1-based). */
  | { readonly kind: 'iteration'; readonly iteration: number }
  | { readonly kind: 'saving' };

export const isRunPhase = (x: unknown): x is RunPhase =>
  isObject(x) &&
  (x.kind === 'loading' ||
    x.kind === 'saving' ||
    (x.kind === 'warm-start' && isString(x.from)) ||
    ((x.kind === 'evaluating' || x.kind === 'iteration') && isNumber(x.iteration)));

export function describePhase(p: RunPhase, iterations: number): string {
  switch (p.kind) {
    case 'loading':
      return 'loading the policy and the environment';
    case 'warm-start':
      return 'loading the warm start checkpoint';
    case 'evaluating':
      return p.iteration === 0 ? 'evaluating before training' : `evaluating after iteration ${p.iteration}`;
    case 'iteration':
      return `iteration ${p.iteration}/${iterations}`;
    case 'saving':
      return 'saving the checkpoint';
  }
}

/** Iterations done before an ETA is shown: the first ones include compilation and cache warm-up. */
export const ETA_AFTER_ITERATIONS = 3;

/**
 * Time left (ms) from the iterations' own times only (startup and evaluations excluded: they would make
 * the first estimates many times too long); -1 until ETA_AFTER_ITERATIONS iterations are done.
 */
export function remainingMs(iterationMsTotal: number, done: number, remaining: number): number {
  return done < ETA_AFTER_ITERATIONS ? -1 : (iterationMsTotal / done) * remaining;
}

export interface ProgressFigures {
  readonly rewardMean: number;
  readonly successRate: number;
  readonly loss: number;
  /** SFT on a language model: share of demonstration tokens the model predicts (when the learner records it). */
  readonly tokenAccuracy?: number;
}

/**
 * The figures a progress line shows. SFT imitates demonstrations whose reward says nothing about the
 * model: it reports the model's loss and token accuracy on them; the other methods report reward and
 * training success.
 */
export function progressFigures(method: string, p: ProgressFigures): string[] {
  if (method === 'sft') return [`loss ${fixed(p.loss, 4)}`, ...(p.tokenAccuracy !== undefined ? [`token accuracy ${percent(p.tokenAccuracy, 1)}`] : [])];
  return [`reward ${fixed(p.rewardMean, 3)}`, `success ${percent(p.successRate, 1)}`];
}
