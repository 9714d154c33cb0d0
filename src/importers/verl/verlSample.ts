// One line of a verl generation dump, checked, and what it becomes in the store. verl's
// RayPPOTrainer._dump_generations writes `{global_steps}.jsonl`, one JSON object per sample:
// `input` (decoded prompt), `output` (decoded response), `gts` (reward_model.ground_truth), `score`
// (the summed token-level score), `step`, and every key of the reward function's extra info whose list
// has one value per sample (e.g. `acc`, `pred`; validation dumps add `reward`).
import * as crypto from 'node:crypto';
import { numericExtras } from '../../shared/rewardExtras';
import type { EpisodeOutcome, TerminationReason } from '../../shared/types';
import { splitTurns, type SplitTurn } from './chatTurns';

const CORE_KEYS = new Set(['input', 'output', 'gts', 'score', 'step']);

export interface VerlSample {
  readonly input: string;
  readonly output: string;
  readonly gts: unknown;
  readonly score: number;
  readonly step: number;
  /** The reward function's extra keys, as dumped. */
  readonly extras: Readonly<Record<string, unknown>>;
}

export type LineResult = { readonly ok: true; readonly sample: VerlSample } | { readonly ok: false; readonly reason: string };

/** Parses one dump line of the file for `fileStep`; a bad line gets the reason, never an exception. */
export function parseDumpLine(text: string, fileStep: number): LineResult {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not JSON (${(e as Error).message})` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, reason: 'not a JSON object' };
  const o = v as Record<string, unknown>;
  if (typeof o.input !== 'string') return { ok: false, reason: '"input" must be a string (the decoded prompt)' };
  if (typeof o.output !== 'string') return { ok: false, reason: '"output" must be a string (the decoded response)' };
  if (typeof o.score !== 'number' || !Number.isFinite(o.score)) return { ok: false, reason: '"score" must be a finite number' };
  if (o.step !== undefined && o.step !== fileStep) return { ok: false, reason: `"step" is ${JSON.stringify(o.step)} but the file is ${fileStep}.jsonl` };
  const extras: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (!CORE_KEYS.has(k)) extras[k] = x;
  return { ok: true, sample: { input: o.input, output: o.output, gts: o.gts ?? null, score: o.score, step: fileStep, extras } };
}

const truthy = (x: unknown): boolean | undefined => (typeof x === 'boolean' ? x : typeof x === 'number' && Number.isFinite(x) ? x > 0.5 : undefined);

/**
 * The outcome of a sample. success: the reward's `acc` extra when it reports one, else score > 0.
 * Public/private pass: our exported reward's `public_pass`/`private_pass` extras when present, else
 * the same as success (verl's reward is one outcome).
 */
export function sampleOutcome(s: VerlSample): EpisodeOutcome {
  const success = truthy(s.extras.acc) ?? s.score > 0;
  return {
    reward: s.score,
    success,
    publicPass: truthy(s.extras.public_pass) ?? success,
    privatePass: truthy(s.extras.private_pass) ?? success,
    details: { source: 'verl', input: s.input, groundTruth: s.gts, metrics: numericExtras(s.extras), extras: s.extras },
  };
}

/** Turns of the sample, and how it ended: a last tool call that got no response means verl stopped it (turn or length cap). */
export function sampleTurns(s: VerlSample): { turns: SplitTurn[]; termination: TerminationReason } {
  const turns = splitTurns(s.output);
  const last = turns[turns.length - 1];
  const cut = last !== undefined && last.action.kind === 'tool' && last.action.name !== 'answer' && last.observation.final === true;
  return { turns, termination: cut ? 'turn_cap' : 'finished' };
}

/** A stable task id for a prompt: equal inputs within a step are one group (the rollout.n samples of one prompt). */
export function taskIdOf(input: string): string {
  return `verl:${crypto.createHash('sha1').update(input).digest('hex').slice(0, 16)}`;
}
